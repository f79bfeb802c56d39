variable "x" { type = string, default = "a" } # ERROR@29: Invalid single-argument block definition
