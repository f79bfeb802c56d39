locals {
  # The file ends inside a quoted string, with no newline after it.
  # Reported at the end of the file, as terraform 1.11.4 validate -json reports it.
  # ERROR-BELOW@14: Unterminated template string
  name = "abc