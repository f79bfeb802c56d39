locals {
  path = "C:\Program Files" # ERROR@13: Invalid escape sequence
}
