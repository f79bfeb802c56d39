// Corpus and malformed-input tests of the HCL parser (src/hcl).
//
// Every file of test/hcl/corpus is a realistic configuration and must parse
// with no diagnostic at all; the per-file tests then assert on structure.
// Every file of test/hcl/invalid carries its expected diagnostics as comments:
//   `# ERROR: <summary>` or `# ERROR@<column>: <summary>` on the offending line,
//   `# ERROR-BELOW[@<column>]: <summary>` for the next line that is not itself
//   such a comment (for lines that cannot hold a comment).
// and must produce exactly those error diagnostics.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { Expression } from '../../src/hcl/index.js';
import {
  exprAsKeyword,
  isStaticList,
  parseHCL,
  sourceText,
  staticMap,
  staticStringList,
  staticTraversal,
} from '../../src/hcl/index.js';
import { INVALID, attr, block, blocks, corpusFiles, parseCorpus, shape, str, value } from './helpers.js';

describe('corpus: real-world configurations', () => {
  it('has at least 12 files', () => {
    expect(corpusFiles().length).toBeGreaterThanOrEqual(12);
  });

  it.each(corpusFiles())('%s parses with no diagnostics', (name) => {
    const r = parseCorpus(name);
    expect(r.body.attributes.length + r.body.blocks.length).toBeGreaterThan(0);
  });

  it('versions.tf: required_providers in object form', () => {
    const { body } = parseCorpus('versions.tf');
    const rp = block(block(body, 'terraform').body, 'required_providers');
    const entries = rp.body.attributes.map((a) => {
      const m = staticMap(a.expr);
      expect(m.diagnostics).toEqual([]);
      const fields: Record<string, string> = {};
      for (const p of m.pairs ?? [])
        if (p.key !== undefined && p.key !== 'configuration_aliases') fields[p.key] = str(p.value);
      return [a.name, fields] as const;
    });
    expect(entries).toEqual([
      ['aws', { source: 'hashicorp/aws', version: '>= 5.46, < 6.0.0' }],
      ['kubernetes', { source: 'hashicorp/kubernetes', version: '~> 2.30' }],
      ['helm', { source: 'registry.opentofu.org/hashicorp/helm', version: '2.13.2' }],
      ['tls', { source: 'hashicorp/tls' }],
      ['corp-internal', { source: 'tf.example.com/platform/corp-internal', version: '~> 0.4.0' }],
    ]);
    const corp = staticMap(attr(rp.body, 'corp-internal').expr).pairs?.find((p) => p.key === 'configuration_aliases');
    const aliases = (corp?.value.kind === 'TupleCons' ? corp.value.items : []).map((e) =>
      staticTraversal(e)
        .traversal?.map((t) => (t.type === 'index' ? String(t.key) : t.name))
        .join('.'),
    );
    expect(aliases).toEqual(['corp-internal.east', 'corp-internal.west']);
    expect(str(attr(block(body, 'terraform').body, 'required_version').expr)).toBe('>= 1.5.7');
    expect(block(block(body, 'terraform').body, 'backend', 's3').body.attributes.map((a) => a.name)).toContain(
      'dynamodb_table',
    );
    // Provider-defined function names keep their namespace.
    expect(shape(attr(block(body, 'locals').body, 'role').expr)).toEqual({
      call: 'provider::aws::arn_parse',
      args: ['var.role_arn'],
    });
    expect(blocks(body, 'provider').map((b) => b.labels[0])).toEqual(['aws', 'aws']);
    const moduleProviders = staticMap(attr(block(body, 'module', 'acm').body, 'providers').expr).pairs ?? [];
    expect(moduleProviders.map((p) => [p.key, shape(p.value)])).toEqual([['aws', 'aws.us_east_1']]);
  });

  it('legacy-required-providers.tf: the legacy string form and HIL-era syntax', () => {
    const { body } = parseCorpus('legacy-required-providers.tf');
    const rp = block(block(body, 'terraform').body, 'required_providers');
    expect(rp.body.attributes.map((a) => [a.name, str(a.expr)])).toEqual([
      ['aws', '~> 2.70'],
      ['template', '>= 2.1'],
      ['null', '2.1.2'],
    ]);
    const web = block(body, 'resource', 'aws_instance', 'web');
    // "${var.instance_count}" is a single interpolation: unwrapped, not a string.
    expect(shape(attr(web.body, 'count').expr)).toEqual({ wrap: 'var.instance_count' });
    // Legacy index `.0` is an index step; `.*` an attribute-only splat.
    expect(shape(attr(block(body, 'resource', 'aws_eip', 'web').body, 'instance').expr)).toEqual({
      wrap: 'aws_instance.web.0.id',
    });
    const eipInstance = attr(block(body, 'resource', 'aws_eip', 'web').body, 'instance').expr;
    const wrapped = eipInstance.kind === 'TemplateWrap' ? eipInstance.wrapped : eipInstance;
    expect(wrapped.kind === 'ScopeTraversal' && wrapped.traversal[2]).toMatchObject({
      type: 'index',
      key: 0,
      legacy: true,
    });
    expect(shape(attr(web.body, 'subnet_id').expr)).toEqual({
      wrap: {
        call: 'element',
        args: [{ splat: 'aws_subnet.main', each: { rel: '*', steps: ['id'] }, attrOnly: true }, 'count.index'],
      },
    });
    expect(exprAsKeyword(attr(block(body, 'variable', 'amis').body, 'type').expr)).toBeUndefined();
    expect(str(attr(block(body, 'variable', 'amis').body, 'type').expr)).toBe('map');
    // Old-style `tags { ... }` block.
    expect(block(web.body, 'tags').body.attributes.map((a) => a.name)).toEqual(['Name']);
  });

  it('terraform.lock.hcl: providers, versions and static hash lists', () => {
    const { body } = parseCorpus('terraform.lock.hcl');
    const providers = blocks(body, 'provider');
    expect(providers.map((p) => p.labels)).toEqual([
      ['registry.terraform.io/hashicorp/aws'],
      ['registry.terraform.io/hashicorp/kubernetes'],
      ['registry.opentofu.org/hashicorp/helm'],
      ['tf.example.com/platform/corp-internal'],
    ]);
    const aws = providers[0]!;
    expect(str(attr(aws.body, 'version').expr)).toBe('5.46.0');
    expect(str(attr(aws.body, 'constraints').expr)).toBe('>= 4.57.0, >= 5.46.0, < 6.0.0');
    const hashes = attr(aws.body, 'hashes').expr;
    expect(isStaticList(hashes)).toBe(true);
    const list = staticStringList(hashes);
    expect(list.diagnostics).toEqual([]);
    expect(list.value).toHaveLength(5);
    expect(list.value?.[0]).toBe('h1:d0Mf33mbbQujZ/JaYkqmH5gZGvP+iEIWf9yBSiOwimE=');
    expect(list.value?.slice(1).every((h) => /^zh:[0-9a-f]{64}$/.test(h))).toBe(true);
    expect(providers[2]!.body.attributes.map((a) => a.name)).toEqual(['version', 'hashes']);
  });

  it('cli-config.tfrc: provider_installation, host, credentials (HCL 1 quoted names)', () => {
    const { body } = parseCorpus('cli-config.tfrc');
    expect(str(attr(body, 'plugin_cache_dir').expr)).toBe('$HOME/.terraform.d/plugin-cache');
    expect(value(attr(body, 'disable_checkpoint').expr)).toBe(true);
    const pi = block(body, 'provider_installation');
    expect(pi.body.blocks.map((b) => b.type)).toEqual([
      'filesystem_mirror',
      'network_mirror',
      'dev_overrides',
      'direct',
    ]);
    expect(staticStringList(attr(block(pi.body, 'network_mirror').body, 'include').expr).value).toEqual([
      'registry.terraform.io/hashicorp/*',
      'registry.opentofu.org/*/*',
    ]);
    const overrides = block(pi.body, 'dev_overrides').body.attributes;
    expect(overrides.map((a) => [a.name, str(a.expr)])).toEqual([['hashicorp/null', '/home/developer/go/bin']]);
    expect(staticStringList(attr(block(pi.body, 'direct').body, 'exclude').expr).value).toEqual([
      'example.com/*/*',
      'registry.terraform.io/hashicorp/*',
    ]);
    expect(value(attr(block(body, 'host', 'example.com').body, 'services').expr)).toEqual({
      'modules.v1': 'https://modules.example.com/v1/',
      'providers.v1': 'https://providers.example.com/v1/',
    });
    expect(blocks(body, 'credentials').map((b) => [b.labels[0], str(attr(b.body, 'token').expr)])).toEqual([
      ['app.terraform.io', 'xxxxxx.atlasv1.zzzzzzzzzzzzz'],
      ['tf.example.com', 'abcdef0123456789'],
    ]);
    expect(block(body, 'credentials_helper', 'credstore').body.attributes.map((a) => a.name)).toEqual(['args']);
    // Without the HCL 1 option, the quoted name is the native syntax's error.
    const strict = parseHCL(readFileSync(join(INVALID, '..', 'corpus', 'cli-config.tfrc')), 'cli-config.tfrc');
    expect(strict.diagnostics.map((d) => [d.summary, d.range?.start?.line])).toEqual([['Invalid argument name', 22]]);
  });

  it('kubernetes-helm.tf: heredoc YAML, indented heredocs inside a tuple and a call', () => {
    const { body, source } = parseCorpus('kubernetes-helm.tf');
    const auth = block(body, 'resource', 'kubernetes_config_map', 'aws_auth');
    const data = attr(auth.body, 'data').expr;
    expect(data.kind).toBe('ObjectCons');
    const mapRoles = data.kind === 'ObjectCons' ? data.items[0]!.value : data;
    expect(mapRoles.kind === 'Template' && mapRoles.heredoc).toEqual({ marker: 'YAML', flush: false });
    expect(shape(mapRoles)).toEqual({
      template: [
        '- rolearn: ',
        'module.eks.node_iam_role_arn',
        '\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n    - system:bootstrappers\n    - system:nodes\n',
      ],
    });
    const values = attr(block(body, 'resource', 'helm_release', 'prometheus').body, 'values').expr;
    const first = values.kind === 'TupleCons' ? values.items[0]! : values;
    expect(first.kind === 'Template' && first.heredoc).toEqual({ marker: 'EOT', flush: true });
    const parts = first.kind === 'Template' ? first.parts : [];
    expect(shape(parts[0]!)).toBe('grafana:\n  enabled: true\n  adminPassword: "');
    expect(shape(parts[1]!)).toBe('random_password.grafana.result');
    expect(shape(parts[parts.length - 1]!)).toBe(
      '\nprometheus:\n  prometheusSpec:\n    retention: 15d\n    storageSpec:\n      volumeClaimTemplate:\n        spec:\n          storageClassName: gp3\n          resources:\n            requests:\n              storage: 50Gi\n',
    );
    expect(values.kind === 'TupleCons' && values.items.length).toBe(2);
    // A heredoc as a function argument, closed by a parenthesis on the next line.
    const manifest = attr(block(body, 'resource', 'kubernetes_manifest', 'cluster_issuer').body, 'manifest').expr;
    expect(manifest.kind === 'FunctionCall' && manifest.name).toBe('yamldecode');
    const tmpl = manifest.kind === 'FunctionCall' ? manifest.args[0]! : manifest;
    expect(shape(tmpl)).toMatchObject({
      template: [
        'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: letsencrypt-prod\nspec:\n  acme:\n    email: ',
        'var.acme_email',
        expect.any(String),
      ],
    });
    expect(sourceText(source, tmpl.range).split('\n')[0]).toBe('<<-EOF');
    // Deeply nested blocks with a dynamic block.
    const container = block(
      block(
        block(block(block(body, 'resource', 'kubernetes_deployment_v1', 'app').body, 'spec').body, 'template').body,
        'spec',
      ).body,
      'container',
    );
    const env = block(container.body, 'dynamic', 'env');
    expect(shape(attr(env.body, 'for_each').expr)).toEqual({
      call: 'merge',
      args: ['var.env', { object: [['ENVIRONMENT', 'var.environment']] }],
    });
    expect(block(env.body, 'content').body.attributes.map((a) => a.name)).toEqual(['name', 'value']);
  });

  it('templates.tf: interpolation, directives, strip markers, escapes and heredocs', () => {
    const { body } = parseCorpus('templates.tf');
    const l = block(body, 'locals').body;
    expect(shape(attr(l, 'greeting').expr)).toEqual({ template: ['Hello, ', 'var.name', '!'] });
    expect(str(attr(l, 'literal').expr)).toBe('Use ${var.name} or %{ if } in documentation');
    expect(str(attr(l, 'escapes').expr)).toBe('tab:\t quote:" backslash:\\ nl:\n cr:\r snowman:\u2603 face:\u{1F600}');
    expect(str(attr(l, 'dollar').expr)).toBe('cost: $5 and 50% off');
    expect(str(attr(l, 'folded').expr)).toBe('static-3');
    expect(shape(attr(l, 'unwrapped').expr)).toEqual({ wrap: 'var.enabled' });
    expect(shape(attr(l, 'inline_if').expr)).toEqual({
      template: ['instance', { if: ['var.count', '>', 1], then: { template: ['s'] }, else: { template: [''] } }],
    });
    expect(shape(attr(l, 'inline_for').expr)).toEqual({
      template: [
        {
          for: ['i', 'name'],
          in: 'var.names',
          do: { template: [{ cond: ['i', '>', 0], t: { template: [', '] }, f: { template: [''] } }, 'name'] },
        },
      ],
    });
    // `%{~` at the start of a line strips that line's indentation before the
    // `<<-` rule runs, so the minimum indentation is 0 and nothing is removed
    // (hclsyntax applies strip markers first, then the flush rule).
    expect(shape(attr(l, 'user_data').expr)).toEqual({
      template: [
        '    #!/bin/bash\n    set -euo pipefail\n    echo "Bootstrapping ',
        'var.cluster_name',
        '"\n',
        { for: ['k', 'v'], in: 'var.node_labels', do: { template: ['    echo "label ', 'k', '=', 'v', '"\n'] } },
        '    ',
        {
          if: 'var.enable_ssm',
          then: { template: ['\n    systemctl enable --now amazon-ssm-agent\n    '] },
          else: { template: ['\n    systemctl disable amazon-ssm-agent\n    '] },
        },
        '\n    export PATH="$PATH:/usr/local/bin"\n    echo "literal ${HOME} and %{ not a directive }"\n',
      ],
    });
    expect(shape(attr(l, 'nginx_conf').expr)).toEqual({
      template: [
        'server {\n    listen 80;\n    server_name ',
        'var.domain',
        ';\n\n    location / {\n        proxy_pass http://',
        'var.upstream',
        ':',
        'var.port',
        ';\n    }\n}\n',
      ],
    });
    expect(str(attr(l, 'indented_heredoc').expr)).toBe('  four\ntwo\n    six\n\ntwo-again\n');
    expect(str(attr(l, 'heredoc_keeps_indentation').expr)).toBe('  keep leading spaces\n');
    expect(str(attr(l, 'empty_heredoc').expr)).toBe('');
    expect(str(attr(l, 'strip').expr)).toBe('abc');
    expect(shape(attr(l, 'script').expr)).toMatchObject({ call: 'templatefile' });
    expect(shape(attr(block(body, 'output', 'rendered').body, 'value').expr)).toEqual({
      template: [
        '',
        {
          for: ['', 'ip'],
          in: { splat: 'aws_instance.web', each: { rel: '*', steps: ['private_ip'] }, attrOnly: false },
          do: { template: ['    server ', 'ip', '\n'] },
        },
        '',
      ],
    });
  });

  it('comments.tf: all three comment kinds, tabs, and no trailing newline', () => {
    const r = parseCorpus('comments.tf');
    const styles = r.comments.map((c) => c.style);
    expect(styles.filter((s) => s === '#').length).toBeGreaterThanOrEqual(8);
    expect(styles.filter((s) => s === '//').length).toBeGreaterThanOrEqual(4);
    expect(styles.filter((s) => s === '/*').length).toBeGreaterThanOrEqual(7);
    expect(r.comments[r.comments.length - 1]).toMatchObject({
      style: '#',
      text: '# Final comment without a trailing newline',
    });
    const a = block(r.body, 'resource', 'null_resource', 'a');
    expect(value(attr(a.body, 'triggers').expr)).toEqual({ a: '1', b: '2', c: '3' });
    expect(value(attr(a.body, 'count').expr)).toBe(1);
    const l = block(r.body, 'locals').body;
    expect(value(attr(l, 'tabbed').expr)).toEqual(['one', 'two', 'three']);
    expect(str(attr(l, 'url').expr)).toBe('http://example.com/#not-a-comment');
    expect(str(attr(l, 'path').expr)).toBe('//also/not/a/comment');
    expect(str(attr(l, 'star').expr)).toBe('/* not a comment */');
    expect(value(attr(l, 'product').expr)).toBe(6);
    expect(value(attr(l, 'ratio').expr)).toBe(5);
    // Columns count a tab as one character.
    expect(attr(l, 'tabbed').nameRange.start).toMatchObject({ column: 2 });
  });

  it('outputs-expressions.tf: operators, precedence, literals, traversals, splats', () => {
    const { body } = parseCorpus('outputs-expressions.tf');
    const l = block(body, 'locals').body;
    const e = (name: string): Expression => attr(l, name).expr;
    expect(value(e('arithmetic'))).toBe(5); // 1 + 6 - ((4 / 2) % 3)
    expect(shape(e('arithmetic'))).toEqual([[1, '+', [2, '*', 3]], '-', [[4, '/', 2], '%', 3]]);
    expect(shape(e('negation'))).toEqual([['-', 'var.offset'], '+', ['-', { parens: [2, '*', 3] }]]);
    expect(shape(e('precedence'))).toEqual([
      ['!', 'var.a'],
      '||',
      ['var.b', '&&', [['var.c', '==', 'var.d'], '!=', false]],
    ]);
    expect(value(e('comparisons'))).toEqual([true, true, true, true]);
    expect(shape(e('conditional'))).toEqual({
      cond: 'var.a',
      t: { cond: 'var.b', t: { template: ['ab'] }, f: { template: ['a'] } },
      f: { cond: 'var.c', t: { template: ['c'] }, f: { template: ['none'] } },
    });
    expect(value(e('numbers'))).toEqual([0, 42, 3.14159, 1000, 0.0025, 6.02e23]);
    expect(value(e('keywords'))).toEqual([true, false, null]);
    expect(value(e('parens'))).toBe(9);
    expect(shape(e('index_expr'))).toEqual({
      index: 'var.list',
      key: [{ call: 'length', args: ['var.list'] }, '-', 1],
    });
    expect(shape(e('string_key'))).toBe('var.map.key with spaces');
    expect(shape(e('legacy'))).toBe('var.list.0');
    expect(shape(e('legacy_attr'))).toBe('var.instances.0.id');
    expect(shape(e('splat_attr'))).toEqual({
      splat: 'var.instances',
      each: { rel: '*', steps: ['id'] },
      attrOnly: true,
    });
    expect(shape(e('splat_full'))).toEqual({
      splat: 'var.instances',
      each: { rel: '*', steps: ['network_interface', [0], 'ip'] },
      attrOnly: false,
    });
    expect(shape(e('splat_deep'))).toEqual({
      splat: 'var.groups',
      each: { splat: { rel: '*', steps: ['members'] }, each: { rel: '*', steps: ['name'] }, attrOnly: false },
      attrOnly: false,
    });
    expect(shape(e('call_expand'))).toEqual({ call: 'max', args: ['var.numbers'], expand: true });
    expect(shape(e('call_multi'))).toEqual({
      call: 'format',
      args: [{ template: ['%s-%s-%03d'] }, 'var.prefix', 'var.name', 'var.index'],
    });
    expect(value(e('empty_tuple'))).toEqual([]);
    expect(value(e('empty_object'))).toEqual({});
    expect(value(e('one_line'))).toEqual({ a: 1, b: 'two', c: [3] });
    expect(value(e('colon_object'))).toEqual({ a: 1, b: 2 });
    expect(shape(e('computed_key'))).toEqual({
      object: [
        [{ key: { parens: 'var.key_name' } }, { template: ['value'] }],
        [{ template: ['var.prefix', '-name'] }, { template: ['templated key'] }],
        ['plain', { template: ['identifier key'] }],
        [{ template: ['quoted'] }, { template: ['string key'] }],
        ['for', { template: ['reserved-looking key after the first item'] }],
      ],
    });
    expect(value(e('nested'))).toEqual({ level1: { level2: { level3: [{ deep: [1, [2, [3]]] }] } } });
    expect(value(e('trailing_comma'))).toEqual(['a', 'b']);
    expect(shape(e('multiline_condition'))).toEqual({
      parens: { cond: ['var.environment', '==', { template: ['prod'] }], t: 3, f: 1 },
    });
    expect(shape(e('for_if'))).toEqual({
      forExpr: 'tuple',
      vars: ['i', 'v'],
      value: { call: 'upper', args: ['v'] },
      if: [['i', '%', 2], '==', 0],
    });
    expect(shape(e('for_obj'))).toEqual({
      forExpr: 'object',
      vars: ['k', 'v'],
      key: { call: 'upper', args: ['k'] },
      value: 'v',
    });
    expect(shape(e('for_group'))).toMatchObject({
      forExpr: 'object',
      vars: ['', 'v'],
      group: true,
      if: ['v', '!=', { template: [''] }],
    });
    // A single-line block.
    const single = block(body, 'output', 'single_line_block');
    expect(single.body.attributes.map((a) => a.name)).toEqual(['value']);
    const uni = attr(block(body, 'output', 'unicode').body, 'value');
    expect(shape(uni.expr)).toEqual({
      template: ['日本語 — naïve café ', 'local.nested.level1.level2.level3.0.deep.1.1.0'],
    });
    // Columns count characters, not bytes: the quote, 17 characters of text and `${` precede `local`.
    const interp = uni.expr.kind === 'Template' ? uni.expr.parts[1]! : uni.expr;
    expect(interp.range.start.column - uni.expr.range.start.column).toBe(20);
    expect(interp.range.start.byte - uni.expr.range.start.byte).toBe(30);
  });

  it('aws-vpc-module.tf: counts, dynamic blocks, splats, nested conditionals', () => {
    const { body } = parseCorpus('aws-vpc-module.tf');
    expect(blocks(body, 'resource').map((b) => b.labels.join('.'))).toEqual([
      'aws_vpc.this',
      'aws_vpc_ipv4_cidr_block_association.this',
      'aws_subnet.public',
      'aws_route_table.public',
      'aws_route_table_association.public',
      'aws_network_acl.public',
      'aws_network_acl_rule.public_inbound',
      'aws_eip.nat',
      'aws_nat_gateway.this',
      'aws_default_security_group.this',
    ]);
    const sg = block(body, 'resource', 'aws_default_security_group', 'this');
    expect(blocks(sg.body, 'dynamic').map((d) => [d.labels[0], shape(attr(d.body, 'for_each').expr)])).toEqual([
      ['ingress', 'var.default_security_group_ingress'],
      ['egress', 'var.default_security_group_egress'],
    ]);
    const l = blocks(body, 'locals')[0]!.body;
    expect(shape(attr(l, 'nat_gateway_ips').expr)).toEqual({
      cond: 'var.reuse_nat_ips',
      t: 'var.external_nat_ip_ids',
      f: { splat: 'aws_eip.nat', each: { rel: '*', steps: ['id'] }, attrOnly: false },
    });
    expect(shape(attr(block(body, 'resource', 'aws_route_table', 'public').body, 'count').expr)).toEqual({
      cond: 'local.create_public_subnets',
      t: { cond: 'var.create_multiple_public_route_tables', t: 'local.len_public_subnets', f: 1 },
      f: 0,
    });
    expect(blocks(body, 'output').map((o) => o.labels[0])).toEqual(['vpc_id', 'public_subnets', 'natgw_ids']);
  });

  it('aws-eks.tf: for expression with if, heredoc JSON policy, templatefile', () => {
    const { body } = parseCorpus('aws-eks.tf');
    const ng = attr(blocks(body, 'locals')[0]!.body, 'node_groups').expr;
    expect(shape(ng)).toMatchObject({
      forExpr: 'object',
      vars: ['name', 'ng'],
      key: 'name',
      if: { call: 'try', args: ['ng.create', true] },
    });
    const policy = attr(block(body, 'resource', 'aws_iam_policy', 'cluster_encryption').body, 'policy').expr;
    expect(policy.kind === 'Template' && policy.heredoc?.marker).toBe('POLICY');
    const parts = policy.kind === 'Template' ? policy.parts : [];
    expect(parts).toHaveLength(3);
    expect(shape(parts[1]!)).toEqual({
      cond: 'var.create_kms_key',
      t: 'module.kms.key_arn',
      f: 'var.cluster_encryption_config.provider_key_arn',
    });
    expect(shape(parts[2]!)).toBe('"\n    }\n  ]\n}\n');
    const cluster = block(body, 'resource', 'aws_eks_cluster', 'this');
    expect(blocks(cluster.body, 'dynamic').map((d) => d.labels[0])).toEqual([
      'kubernetes_network_config',
      'encryption_config',
    ]);
    const enc = block(block(cluster.body, 'dynamic', 'encryption_config').body, 'content');
    expect(block(enc.body, 'provider').body.attributes.map((a) => a.name)).toEqual(['key_arn']);
    const lt = block(body, 'resource', 'aws_launch_template', 'node');
    expect(shape(attr(lt.body, 'user_data').expr)).toMatchObject({
      call: 'base64encode',
      args: [{ call: 'templatefile' }],
    });
    const asg = attr(block(body, 'output', 'eks_managed_node_groups_autoscaling_group_names').body, 'value').expr;
    expect(shape(asg)).toMatchObject({ call: 'compact', args: [{ call: 'flatten' }] });
  });

  it('gcp-network-for-each.tf: nested for expressions, grouping, expansion', () => {
    const { body } = parseCorpus('gcp-network-for-each.tf');
    const l = block(body, 'locals').body;
    expect(shape(attr(l, 'rules_by_network').expr)).toEqual({
      forExpr: 'object',
      vars: ['', 'r'],
      key: 'r.network',
      value: 'r',
      group: true,
    });
    expect(shape(attr(l, 'subnets').expr)).toMatchObject({
      forExpr: 'object',
      vars: ['', 's'],
      key: 's.key',
      value: 's',
    });
    expect(shape(attr(l, 'members').expr)).toMatchObject({
      call: 'distinct',
      args: [{ call: 'concat', expand: true }],
    });
    expect(shape(attr(l, 'labels').expr)).toEqual({
      call: 'merge',
      args: [
        'var.labels',
        {
          object: [
            [{ template: ['managed-by'] }, { template: ['terraform'] }],
            [{ template: ['component'] }, { template: ['network'] }],
          ],
        },
      ],
    });
    const sub = block(body, 'resource', 'google_compute_subnetwork', 'this');
    expect(shape(attr(block(sub.body, 'dynamic', 'secondary_ip_range').body, 'iterator').expr)).toBe('range');
    expect(exprAsKeyword(attr(block(sub.body, 'dynamic', 'secondary_ip_range').body, 'iterator').expr)).toBe('range');
    expect(
      value(attr(block(block(sub.body, 'dynamic', 'log_config').body, 'content').body, 'flow_sampling').expr),
    ).toBe(0.5);
  });

  it('azure-dynamic.tf: nested dynamic blocks with iterators', () => {
    const { body } = parseCorpus('azure-dynamic.tf');
    const agw = block(body, 'resource', 'azurerm_application_gateway', 'main');
    const listener = block(agw.body, 'dynamic', 'http_listener');
    expect(exprAsKeyword(attr(listener.body, 'iterator').expr)).toBe('be');
    const inner = block(block(listener.body, 'content').body, 'dynamic', 'custom_error_configuration');
    expect(shape(attr(block(inner.body, 'content').body, 'status_code').expr)).toEqual({
      template: ['HttpStatus', 'custom_error_configuration.key'],
    });
    const nsg = block(body, 'resource', 'azurerm_network_security_group', 'main');
    expect(shape(attr(block(nsg.body, 'dynamic', 'security_rule').body, 'for_each').expr)).toMatchObject({
      forExpr: 'object',
      vars: ['idx', 'rule'],
      key: 'rule.name',
      value: { call: 'merge', args: ['rule', { object: [['priority', [100, '+', ['idx', '*', 10]]]] }] },
    });
  });

  it('moved-import-check.tf: moved, import, removed and check blocks, conditions', () => {
    const { body } = parseCorpus('moved-import-check.tf');
    expect(body.blocks.map((b) => b.type)).toEqual([
      'moved',
      'moved',
      'moved',
      'import',
      'import',
      'removed',
      'check',
      'check',
      'resource',
      'resource',
      'data',
      'output',
    ]);
    const moves = blocks(body, 'moved').map((m) => [shape(attr(m.body, 'from').expr), shape(attr(m.body, 'to').expr)]);
    expect(moves).toEqual([
      ['aws_instance.web', 'aws_instance.app.web'],
      ['module.old_vpc', 'module.vpc'],
      ['module.vpc.aws_subnet.private.0', 'module.vpc.aws_subnet.private.eu-west-1a'],
    ]);
    expect(staticTraversal(attr(blocks(body, 'moved')[2]!.body, 'to').expr).traversal?.map((t) => t.type)).toEqual([
      'root',
      'attr',
      'attr',
      'attr',
      'index',
    ]);
    const imp = blocks(body, 'import')[1]!;
    expect(shape(attr(imp.body, 'to').expr)).toEqual({ index: 'aws_s3_bucket.imported', key: 'each.key' });
    const health = block(body, 'check', 'health_check');
    expect(health.body.blocks.map((b) => [b.type, ...b.labels])).toEqual([
      ['data', 'http', 'terraform_io'],
      ['assert'],
    ]);
    const lifecycle = block(block(body, 'resource', 'aws_instance', 'app').body, 'lifecycle');
    expect(lifecycle.body.blocks.map((b) => b.type)).toEqual(['precondition', 'postcondition']);
    expect(shape(attr(lifecycle.body, 'ignore_changes').expr)).toEqual(['tags.LastModified', 'user_data']);
  });

  it('variables-validation.tf: validation blocks, type constraints, heredoc messages', () => {
    const { body } = parseCorpus('variables-validation.tf');
    const pools = block(body, 'variable', 'node_pools');
    expect(blocks(pools.body, 'validation')).toHaveLength(2);
    expect(str(attr(blocks(pools.body, 'validation')[1]!.body, 'error_message').expr)).toBe(
      'Every taint effect must be one of:\n  - NO_SCHEDULE\n  - PREFER_NO_SCHEDULE\n  - NO_EXECUTE\n',
    );
    expect(exprAsKeyword(attr(block(body, 'variable', 'name').body, 'type').expr)).toBe('string');
    expect(shape(attr(block(body, 'variable', 'azs').body, 'type').expr)).toEqual({ call: 'list', args: ['string'] });
    expect(value(attr(block(body, 'variable', 'ingress_rules').body, 'default').expr)).toEqual([
      { port: 443, protocol: 'tcp', cidr_blocks: ['0.0.0.0/0'] },
      { port: 80, protocol: 'tcp', cidr_blocks: ['0.0.0.0/0'] },
    ]);
    expect(value(attr(block(body, 'variable', 'tuple_value').body, 'default').expr)).toEqual(['a', 1, true]);
    expect(value(attr(block(body, 'variable', 'any_value').body, 'default').expr)).toBeNull();
    const msg = attr(
      blocks(block(body, 'variable', 'instance_types').body, 'validation')[0]!.body,
      'error_message',
    ).expr;
    expect(shape(msg)).toMatchObject({ template: ['Unsupported instance type. Allowed: ', { call: 'join' }, '.'] });
  });
});

// ---------------------------------------------------------------------------

interface Expectation {
  line: number;
  column?: number;
  summary: string;
}

function expectationsOf(text: string): Expectation[] {
  const lines = text.split('\n');
  const out: Expectation[] = [];
  let pendingBelow: Omit<Expectation, 'line'>[] = [];
  lines.forEach((line, i) => {
    const m = /#\s*ERROR(-BELOW)?(?:@(\d+))?:\s*(.*?)\s*$/.exec(line);
    if (m?.[1] !== undefined) {
      pendingBelow.push({ summary: m[3] ?? '', ...(m[2] ? { column: Number(m[2]) } : {}) });
      return;
    }
    for (const p of pendingBelow) out.push({ line: i + 1, ...p });
    pendingBelow = [];
    if (m) out.push({ line: i + 1, summary: m[3] ?? '', ...(m[2] ? { column: Number(m[2]) } : {}) });
  });
  return out;
}

describe('malformed input: test/hcl/invalid', () => {
  const files = readdirSync(INVALID).sort();

  it('has fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
  });

  it.each(files)('%s gives exactly its expected diagnostics', (name) => {
    const bytes = readFileSync(join(INVALID, name));
    const expected = expectationsOf(bytes.toString('latin1'));
    expect(expected.length).toBeGreaterThan(0);
    const r = parseHCL(bytes, name);
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    const got = errors.map((d) => ({ line: d.range?.start?.line, column: d.range?.start?.column, summary: d.summary }));
    const want = expected.map((e) => expect.objectContaining(e) as unknown);
    expect(got).toEqual(expect.arrayContaining(want));
    expect(got).toHaveLength(expected.length);
    for (const d of errors) {
      expect(d.range?.filename).toBe(name);
      expect(d.detail.length).toBeGreaterThan(0);
      expect(d.range!.start!.byte).toBeLessThanOrEqual(d.range!.end!.byte!);
    }
  });
});
