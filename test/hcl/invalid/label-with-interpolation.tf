resource "aws_${var.kind}" "x" {} # ERROR@15: Invalid string literal
