x = var.list. # ERROR: Invalid attribute name
