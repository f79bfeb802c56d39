locals {
  "name" = "x" # ERROR@3: Invalid argument name
}
