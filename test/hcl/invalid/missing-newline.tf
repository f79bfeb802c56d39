locals {
  a = 1 b = 2 # ERROR@9: Missing newline after argument
}
