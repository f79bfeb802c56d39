s = "\ud800" # ERROR@6: Invalid escape sequence
