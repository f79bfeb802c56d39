locals {
  a = # ERROR: Invalid expression
  b = 2
}
