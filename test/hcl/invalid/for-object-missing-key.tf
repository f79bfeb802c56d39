x = { for v in var.list : v } # ERROR@27: Invalid 'for' expression
