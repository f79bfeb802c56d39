# Terraform 0.12/0.13-era configuration: legacy provider version constraints
# given as plain strings, interpolation-only expressions, legacy index syntax
# and attribute-only splats.

terraform {
  required_version = "~> 0.12.0"

  required_providers {
    aws      = "~> 2.70"
    template = ">= 2.1"
    null     = "2.1.2"
  }
}

provider "aws" {
  version = "~> 2.70"
  region  = "${var.region}"
}

variable "region" {
  default = "us-west-2"
}

variable "instance_count" {
  default = 2
}

variable "amis" {
  type = "map"

  default = {
    "us-east-1" = "ami-b374d5a5"
    "us-west-2" = "ami-4b32be2b"
  }
}

resource "aws_instance" "web" {
  count         = "${var.instance_count}"
  ami           = "${lookup(var.amis, var.region)}"
  instance_type = "t2.micro"
  subnet_id     = "${element(aws_subnet.main.*.id, count.index)}"

  tags {
    Name = "web-${count.index}"
  }
}

resource "aws_eip" "web" {
  instance = "${aws_instance.web.0.id}"
  vpc      = true
}

resource "null_resource" "provisioner" {
  triggers = {
    instance_ids = "${join(",", aws_instance.web.*.id)}"
  }

  provisioner "local-exec" {
    command = "echo ${aws_instance.web.0.private_ip} >> private_ips.txt"
  }
}

data "template_file" "init" {
  template = "${file("init.tpl")}"

  vars {
    consul_address = "${aws_instance.consul.private_ip}"
  }
}

output "first_public_ip" {
  value = "${aws_eip.web.public_ip}"
}

output "all_private_ips" {
  value = ["${aws_instance.web.*.private_ip}"]
}
