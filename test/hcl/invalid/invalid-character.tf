locals {
  at = "a" @ "b" # ERROR@12: Invalid character
}
