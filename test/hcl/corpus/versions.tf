terraform {
  required_version = ">= 1.5.7"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.46, < 6.0.0"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 2.30"
    }
    helm = {
      source  = "registry.opentofu.org/hashicorp/helm"
      version = "2.13.2"
    }
    tls = {
      source = "hashicorp/tls"
    }
    corp-internal = {
      source                = "tf.example.com/platform/corp-internal"
      version               = "~> 0.4.0"
      configuration_aliases = [corp-internal.east, corp-internal.west]
    }
  }

  backend "s3" {
    bucket         = "acme-terraform-state"
    key            = "platform/eks/terraform.tfstate"
    region         = "eu-west-1"
    dynamodb_table = "terraform-locks"
    encrypt        = true
  }
}

provider "aws" {
  region = var.region

  default_tags {
    tags = {
      Environment = var.environment
      ManagedBy   = "Terraform"
    }
  }
}

provider "aws" {
  alias  = "us_east_1"
  region = "us-east-1"

  assume_role {
    role_arn     = "arn:aws:iam::${var.account_id}:role/terraform"
    session_name = "terraform-${terraform.workspace}"
  }
}

locals {
  # Provider-defined functions (Terraform 1.8+, OpenTofu 1.7+).
  role = provider::aws::arn_parse(var.role_arn)
}

module "acm" {
  source  = "terraform-aws-modules/acm/aws"
  version = "~> 5.0"

  providers = {
    aws = aws.us_east_1
  }

  domain_name = var.domain
}
