x = (1 + 2] # ERROR@11: Unbalanced parentheses
