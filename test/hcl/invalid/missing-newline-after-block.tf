locals {} x = 1 # ERROR@11: Missing newline after block definition
