locals {
  city = "München" # ERROR@12: Invalid character encoding
}
