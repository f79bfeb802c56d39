x = 1.2.3 # ERROR@5: Invalid number literal
