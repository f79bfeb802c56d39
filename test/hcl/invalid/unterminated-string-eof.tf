locals {
  # The file ends inside a quoted string, with no newline after it.
  # ERROR-BELOW@10: Unterminated template string
  name = "abc