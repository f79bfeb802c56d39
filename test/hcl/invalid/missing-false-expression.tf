x = var.a ? "yes" # ERROR: Missing false expression in conditional
