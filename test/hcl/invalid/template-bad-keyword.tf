x = "%{ iff var.a }yes" # ERROR@9: Invalid template control keyword
