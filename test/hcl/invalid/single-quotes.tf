locals {
  s = 'single' # ERROR@7: Invalid character
}
