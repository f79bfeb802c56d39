x = concat(a..., b) # ERROR@13: Missing closing parenthesis
