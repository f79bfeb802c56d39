x = var.list[*.id # ERROR@15: Missing close bracket on splat index
