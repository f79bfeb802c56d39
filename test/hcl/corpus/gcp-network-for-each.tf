locals {
  # Subnets keyed by "region/name", built from a nested structure.
  subnets = {
    for s in flatten([
      for region, cfg in var.regions : [
        for name, cidr in cfg.subnets : {
          key    = "${region}/${name}"
          region = region
          name   = name
          cidr   = cidr
          flow   = lookup(cfg, "flow_logs", false)
        }
      ]
    ]) : s.key => s
  }

  # Group firewall rules by network: grouping mode with "...".
  rules_by_network = { for r in var.firewall_rules : r.network => r... }

  # Every pair of environment and service.
  env_services = [for pair in setproduct(var.environments, var.services) : {
    env     = pair[0]
    service = pair[1]
    name    = "${pair[0]}-${pair[1]}"
  }]

  enabled_apis = toset([
    "compute.googleapis.com",
    "container.googleapis.com",
    "iam.googleapis.com",
  ])

  labels = merge(var.labels, {
    "managed-by" : "terraform",
    "component" : "network",
  })

  members = distinct(concat(
    [for u in var.users : "user:${u}"],
    [for sa in var.service_accounts : "serviceAccount:${sa}"],
    var.extra_members...
  ))

  secondary = {
    for k, v in local.subnets : k => [
      for i, range in lookup(var.secondary_ranges, k, []) : {
        range_name    = "${v.name}-${i}"
        ip_cidr_range = range
      }
    ] if length(lookup(var.secondary_ranges, k, [])) > 0
  }
}

resource "google_project_service" "apis" {
  for_each = local.enabled_apis

  project                    = var.project_id
  service                    = each.value
  disable_dependent_services = false
  disable_on_destroy         = false
}

resource "google_compute_network" "vpc" {
  name                    = "${var.prefix}-vpc"
  project                 = var.project_id
  auto_create_subnetworks = false
  routing_mode            = "GLOBAL"
  mtu                     = 1460

  depends_on = [google_project_service.apis]
}

resource "google_compute_subnetwork" "this" {
  for_each = local.subnets

  name                     = each.value.name
  region                   = each.value.region
  ip_cidr_range            = each.value.cidr
  network                  = google_compute_network.vpc.id
  private_ip_google_access = true

  dynamic "secondary_ip_range" {
    for_each = lookup(local.secondary, each.key, [])
    iterator = range
    content {
      range_name    = range.value.range_name
      ip_cidr_range = range.value.ip_cidr_range
    }
  }

  dynamic "log_config" {
    for_each = each.value.flow ? [1] : []
    content {
      aggregation_interval = "INTERVAL_10_MIN"
      flow_sampling        = 0.5
      metadata             = "INCLUDE_ALL_METADATA"
    }
  }
}

resource "google_compute_firewall" "rules" {
  for_each = { for r in var.firewall_rules : r.name => r }

  name      = each.key
  network   = google_compute_network.vpc.name
  direction = upper(each.value.direction)
  priority  = coalesce(each.value.priority, 1000)

  source_ranges = each.value.direction == "INGRESS" ? each.value.ranges : null
  target_tags   = try(each.value.target_tags, null)

  dynamic "allow" {
    for_each = [for a in each.value.allow : a if a.protocol != "none"]
    content {
      protocol = allow.value.protocol
      ports    = try(allow.value.ports, [])
    }
  }
}

output "subnet_self_links" {
  value = { for k, s in google_compute_subnetwork.this : k => s.self_link }
}

output "subnet_regions" {
  value = sort(distinct(values(google_compute_subnetwork.this)[*].region))
}
