# Terraform requires a newline after the closing marker (hashicorp/terraform#31450).
# ERROR-BELOW@10: Unterminated template string
policy = <<POLICY
{}
POLICY