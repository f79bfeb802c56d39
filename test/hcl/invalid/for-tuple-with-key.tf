x = [for k, v in var.map : k => v] # ERROR@28: Invalid 'for' expression
