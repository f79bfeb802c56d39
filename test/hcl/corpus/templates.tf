# Templates: interpolation, directives, strip markers, escapes and heredocs.

locals {
  greeting = "Hello, ${var.name}!"
  literal  = "Use $${var.name} or %%{ if } in documentation"
  escapes  = "tab:\t quote:\" backslash:\\ nl:\n cr:\r snowman:\u2603 face:\U0001F600"
  dollar   = "cost: $5 and 50% off"
  nested   = "outer-${lower("INNER-${upper(var.suffix)}")}"
  folded   = "${"static"}-${1 + 2}"
  unwrapped = "${var.enabled}"

  inline_if  = "instance%{ if var.count > 1 }s%{ endif }"
  inline_for = "%{ for i, name in var.names }${i > 0 ? ", " : ""}${name}%{ endfor }"

  user_data = <<-EOT
    #!/bin/bash
    set -euo pipefail
    echo "Bootstrapping ${var.cluster_name}"
    %{~ for k, v in var.node_labels ~}
    echo "label ${k}=${v}"
    %{~ endfor ~}
    %{ if var.enable_ssm }
    systemctl enable --now amazon-ssm-agent
    %{ else }
    systemctl disable amazon-ssm-agent
    %{ endif }
    export PATH="$PATH:/usr/local/bin"
    echo "literal $${HOME} and %%{ not a directive }"
  EOT

  nginx_conf = <<EOF
server {
    listen 80;
    server_name ${var.domain};

    location / {
        proxy_pass http://${var.upstream}:${var.port};
    }
}
EOF

  script = templatefile("${path.module}/scripts/init.sh.tftpl", {
    hostname = var.hostname
    packages = ["curl", "jq", "unzip"]
  })

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Action   = ["s3:GetObject"]
        Effect   = "Allow"
        Resource = "arn:aws:s3:::${var.bucket}/*"
      },
    ]
  })

  indented_heredoc = <<-EOT
      four
    two
        six

    two-again
  EOT

  heredoc_keeps_indentation = <<EOT
  keep leading spaces
EOT

  empty_heredoc = <<EOT
EOT

  strip = "a  ${~ "b" ~}  c"
}

output "rendered" {
  value = <<-EOT
    %{ for ip in aws_instance.web[*].private_ip ~}
    server ${ip}
    %{ endfor ~}
  EOT
}
