resource "aws_vpc" "main" = { # ERROR@27: Invalid block definition
  cidr_block = "10.0.0.0/16"
}
