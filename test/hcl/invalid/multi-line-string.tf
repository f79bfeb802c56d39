locals {
  # ERROR-BELOW@23: Invalid multi-line string
  name = "unterminated
  next = "this line still parses"
}
