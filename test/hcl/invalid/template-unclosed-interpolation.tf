# The second quote opens a new string inside the interpolation, which then
# runs into the end of the line.
# ERROR-BELOW@13: Unclosed template interpolation sequence
# ERROR-BELOW@21: Invalid multi-line string
x = "value: ${var.a"
