resource "azurerm_resource_group" "main" {
  name     = "rg-${var.workload}-${var.environment}-${var.location_short}"
  location = var.location
  tags     = local.tags
}

resource "azurerm_network_security_group" "main" {
  name                = "nsg-${var.workload}"
  location            = azurerm_resource_group.main.location
  resource_group_name = azurerm_resource_group.main.name

  dynamic "security_rule" {
    for_each = { for idx, rule in var.security_rules : rule.name => merge(rule, { priority = 100 + idx * 10 }) }
    iterator = rule

    content {
      name                       = rule.key
      priority                   = rule.value.priority
      direction                  = title(lower(rule.value.direction))
      access                     = rule.value.allow ? "Allow" : "Deny"
      protocol                   = try(rule.value.protocol, "Tcp")
      source_port_range          = "*"
      destination_port_range     = length(rule.value.ports) == 1 ? rule.value.ports[0] : null
      destination_port_ranges    = length(rule.value.ports) > 1 ? rule.value.ports : null
      source_address_prefix      = try(rule.value.source, "*")
      destination_address_prefix = "*"
    }
  }
}

resource "azurerm_application_gateway" "main" {
  name                = "agw-${var.workload}"
  resource_group_name = azurerm_resource_group.main.name
  location            = azurerm_resource_group.main.location

  sku {
    name     = "WAF_v2"
    tier     = "WAF_v2"
    capacity = 2
  }

  gateway_ip_configuration {
    name      = "gateway-ip"
    subnet_id = azurerm_subnet.frontend.id
  }

  dynamic "backend_address_pool" {
    for_each = var.backends
    content {
      name  = "${backend_address_pool.key}-pool"
      fqdns = backend_address_pool.value.fqdns
    }
  }

  dynamic "http_listener" {
    for_each = var.backends
    iterator = be
    content {
      name                           = "${be.key}-listener"
      frontend_ip_configuration_name = "frontend-ip"
      frontend_port_name             = be.value.https ? "https" : "http"
      protocol                       = be.value.https ? "Https" : "Http"
      host_names                     = be.value.host_names
      ssl_certificate_name           = be.value.https ? "${be.key}-cert" : null

      dynamic "custom_error_configuration" {
        for_each = lookup(be.value, "error_pages", {})
        content {
          status_code           = "HttpStatus${custom_error_configuration.key}"
          custom_error_page_url = custom_error_configuration.value
        }
      }
    }
  }

  waf_configuration {
    enabled          = true
    firewall_mode    = var.environment == "prod" ? "Prevention" : "Detection"
    rule_set_type    = "OWASP"
    rule_set_version = "3.2"

    dynamic "disabled_rule_group" {
      for_each = var.waf_disabled_rules
      content {
        rule_group_name = disabled_rule_group.key
        rules           = disabled_rule_group.value
      }
    }
  }
}

resource "azurerm_key_vault_access_policy" "readers" {
  count = length(var.reader_object_ids)

  key_vault_id = azurerm_key_vault.main.id
  tenant_id    = data.azurerm_client_config.current.tenant_id
  object_id    = var.reader_object_ids[count.index]

  secret_permissions = ["Get", "List"]
}

locals {
  tags = merge(var.tags, {
    workload    = var.workload
    environment = var.environment
    cost_center = var.cost_center != null ? var.cost_center : "shared"
  })
}
