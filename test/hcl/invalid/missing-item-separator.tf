x = [1 2] # ERROR@8: Missing item separator
