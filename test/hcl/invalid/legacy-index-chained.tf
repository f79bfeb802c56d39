x = var.matrix.0.1 # ERROR@16: Invalid legacy index syntax
