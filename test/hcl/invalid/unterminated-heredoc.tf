locals {
  # ERROR-BELOW@10: Unterminated template string
  text = <<EOT
    line one
    line two
  EOTX
}
