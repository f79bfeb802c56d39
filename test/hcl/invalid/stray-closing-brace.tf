locals {
  a = 1
}
} # ERROR@1: Argument or block definition required
