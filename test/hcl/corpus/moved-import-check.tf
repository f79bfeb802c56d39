# Refactoring and configuration-driven workflow blocks: moved, import, removed,
# check, and custom conditions.

moved {
  from = aws_instance.web
  to   = aws_instance.app["web"]
}

moved {
  from = module.old_vpc
  to   = module.vpc
}

moved {
  from = module.vpc.aws_subnet.private[0]
  to   = module.vpc.aws_subnet.private["eu-west-1a"]
}

import {
  to = aws_s3_bucket.logs
  id = "acme-logs-bucket"
}

import {
  for_each = var.existing_buckets
  to       = aws_s3_bucket.imported[each.key]
  id       = each.value
}

removed {
  from = aws_instance.legacy

  lifecycle {
    destroy = false
  }
}

check "health_check" {
  data "http" "terraform_io" {
    url = "https://www.terraform.io"
  }

  assert {
    condition     = data.http.terraform_io.status_code == 200
    error_message = "${data.http.terraform_io.url} returned an unhealthy status code"
  }
}

check "certificate_expiry" {
  assert {
    condition     = timecmp(aws_acm_certificate.cert.not_after, timeadd(plantimestamp(), "720h")) > 0
    error_message = "The certificate expires within 30 days."
  }
}

resource "aws_instance" "app" {
  for_each = toset(["web", "api"])

  ami           = data.aws_ami.ubuntu.id
  instance_type = var.instance_type

  lifecycle {
    create_before_destroy = true
    prevent_destroy       = false
    ignore_changes        = [tags["LastModified"], user_data]
    replace_triggered_by  = [terraform_data.revision]

    precondition {
      condition     = data.aws_ami.ubuntu.architecture == "x86_64"
      error_message = "The selected AMI must be for the x86_64 architecture."
    }

    postcondition {
      condition     = self.public_dns != ""
      error_message = "EC2 instance must be in a VPC that has public DNS hostnames enabled."
    }
  }
}

resource "terraform_data" "revision" {
  input = var.revision
}

data "aws_ami" "ubuntu" {
  most_recent = true
  owners      = ["099720109477"] # Canonical

  filter {
    name   = "name"
    values = ["ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-*"]
  }
}

output "app_ips" {
  value = { for k, inst in aws_instance.app : k => inst.private_ip }

  precondition {
    condition     = length(aws_instance.app) > 0
    error_message = "No instances were created."
  }
}
