x = [for v of var.list : v] # ERROR@12: Invalid 'for' expression
