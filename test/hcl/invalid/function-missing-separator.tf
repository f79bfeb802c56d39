x = max(1 2) # ERROR@11: Missing argument separator
