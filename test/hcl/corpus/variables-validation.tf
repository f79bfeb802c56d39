variable "name" {
  description = "Name to be used on all the resources as identifier"
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}[a-z0-9]$", var.name)) || var.name == ""
    error_message = "The name must start with a letter, contain only lowercase letters, digits and hyphens, and be at most 32 characters long."
  }
}

variable "cidr" {
  description = "(Optional) The IPv4 CIDR block for the VPC."
  type        = string
  default     = "10.0.0.0/16"
  nullable    = false

  validation {
    condition     = can(cidrhost(var.cidr, 0))
    error_message = "Must be valid IPv4 CIDR."
  }
}

variable "azs" {
  description = "A list of availability zones names or ids in the region"
  type        = list(string)
  default     = []
}

variable "instance_types" {
  type    = set(string)
  default = ["t3.micro", "t3.small"]

  validation {
    condition = alltrue([
      for t in var.instance_types : contains(["t3.micro", "t3.small", "t3.medium", "m6i.large"], t)
    ])
    error_message = "Unsupported instance type. Allowed: ${join(", ", ["t3.micro", "t3.small", "t3.medium", "m6i.large"])}."
  }
}

variable "node_pools" {
  description = "Node pools keyed by name"
  type = map(object({
    machine_type = string
    min_count    = optional(number, 1)
    max_count    = optional(number, 3)
    preemptible  = optional(bool, false)
    labels       = optional(map(string), {})
    taints = optional(list(object({
      key    = string
      value  = string
      effect = string
    })), [])
  }))
  default = {}

  validation {
    condition     = alltrue([for k, v in var.node_pools : v.min_count <= v.max_count])
    error_message = "For every node pool, min_count must not exceed max_count."
  }

  validation {
    condition = alltrue(flatten([
      for pool in values(var.node_pools) : [
        for t in pool.taints : contains(["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"], t.effect)
      ]
    ]))
    error_message = <<-EOT
      Every taint effect must be one of:
        - NO_SCHEDULE
        - PREFER_NO_SCHEDULE
        - NO_EXECUTE
    EOT
  }
}

variable "retention_days" {
  type    = number
  default = 30

  validation {
    condition     = var.retention_days >= 1 && var.retention_days <= 3653 && floor(var.retention_days) == var.retention_days
    error_message = "Retention must be a whole number of days between 1 and 3653."
  }
}

variable "db_password" {
  description = "Master password for the database"
  type        = string
  sensitive   = true
  ephemeral   = false

  validation {
    condition     = length(var.db_password) >= 16 && !contains(["password", "changeme"], lower(var.db_password))
    error_message = "The password must be at least 16 characters and not a well-known default."
  }
}

variable "tags" {
  description = "A map of tags to add to all resources"
  type        = map(string)
  default = {
    Terraform   = "true"
    Environment = "dev"
  }
}

variable "ingress_rules" {
  type = list(object({
    port        = number
    protocol    = string
    cidr_blocks = list(string)
  }))
  default = [
    { port = 443, protocol = "tcp", cidr_blocks = ["0.0.0.0/0"] },
    { port = 80, protocol = "tcp", cidr_blocks = ["0.0.0.0/0"] },
  ]
}

variable "any_value" {
  type    = any
  default = null
}

variable "tuple_value" {
  type    = tuple([string, number, bool])
  default = ["a", 1, true]
}
