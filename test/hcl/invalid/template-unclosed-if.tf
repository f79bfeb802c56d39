x = "%{ if var.a }yes" # ERROR@22: Unexpected end of template
