import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';

const root = new URL('../../', import.meta.url);
const composePath = new URL('docker-compose.yml', root);
const dockerfilePath = new URL('Dockerfile', root);

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function dict(value: unknown, what: string): Dict {
  if (!isDict(value)) throw new Error(`${what} is not a mapping`);
  return value;
}

/** Compose allows `environment` as a mapping or as a list of KEY=VALUE strings. */
function envOf(service: Dict, name: string): Record<string, string> {
  const raw = service['environment'];
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const entry of raw) {
      if (typeof entry !== 'string') throw new Error(`${name}.environment entry is not a string`);
      const eq = entry.indexOf('=');
      if (eq === -1) out[entry] = '';
      else out[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return out;
  }
  for (const [key, value] of Object.entries(dict(raw, `${name}.environment`))) {
    out[key] = value === null || value === undefined ? '' : String(value);
  }
  return out;
}

/** `command` may be a string or an exec-form list. */
function commandOf(service: Dict): string {
  const raw = service['command'];
  if (Array.isArray(raw)) return raw.map(String).join(' ');
  return typeof raw === 'string' ? raw : '';
}

/** Short (`"8080:8080"`) and long (`{ target, published }`) port syntaxes. */
function publishedPorts(service: Dict): string[] {
  const raw = service['ports'];
  if (!Array.isArray(raw)) return [];
  return raw.map((p: unknown) => {
    if (typeof p === 'string' || typeof p === 'number') {
      const parts = String(p).split(':');
      // host part is the second to last segment ("ip:host:container" or "host:container")
      return parts.length >= 2 ? (parts[parts.length - 2] ?? '') : '';
    }
    if (isDict(p)) return p['published'] === undefined ? '' : String(p['published']);
    return '';
  });
}

function dependsOnConditions(service: Dict, name: string): Record<string, string> {
  const raw = service['depends_on'];
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const dep of raw) out[String(dep)] = 'service_started';
    return out;
  }
  for (const [dep, spec] of Object.entries(dict(raw, `${name}.depends_on`))) {
    const condition = isDict(spec) ? spec['condition'] : undefined;
    out[dep] = typeof condition === 'string' ? condition : 'service_started';
  }
  return out;
}

describe('docker-compose.yml', () => {
  // Compose resolves `<<` merge keys (used for the shared x-cairn-env anchor).
  const compose = dict(parse(readFileSync(composePath, 'utf8'), { merge: true }), 'compose file');
  const services = dict(compose['services'], 'services');

  function service(name: string): Dict {
    return dict(services[name], `service ${name}`);
  }

  it('uses the Compose spec without a top-level version key', () => {
    expect(compose).to.not.have.property('version');
  });

  it('defines every service Cairn needs', () => {
    for (const name of ['mysql', 'redis', 'etcd', 'minio', 'milvus', 'api', 'worker']) {
      expect(services, `service ${name}`).to.have.property(name);
      dict(services[name], `service ${name}`);
    }
  });

  it('runs MySQL 8', () => {
    expect(String(service('mysql')['image'])).to.match(/^mysql:8/);
  });

  it('runs Redis 7 with AOF persistence and no eviction (required by BullMQ)', () => {
    const redis = service('redis');
    expect(String(redis['image'])).to.match(/^redis:7/);
    const command = commandOf(redis);
    expect(command).to.include('--maxmemory-policy noeviction');
    expect(command).to.include('--appendonly yes');
  });

  it('gives every service except worker a healthcheck', () => {
    for (const [name, raw] of Object.entries(services)) {
      if (name === 'worker') continue;
      const svc = dict(raw, `service ${name}`);
      const healthcheck = dict(svc['healthcheck'], `${name}.healthcheck`);
      expect(healthcheck['disable'], `${name}.healthcheck.disable`).to.not.equal(true);
      expect(healthcheck, `${name}.healthcheck`).to.have.property('test');
    }
  });

  it('runs two worker replicas', () => {
    const deploy = dict(service('worker')['deploy'], 'worker.deploy');
    expect(deploy['replicas']).to.equal(2);
  });

  for (const name of ['api', 'worker']) {
    it(`passes datastore connection settings to ${name}`, () => {
      const env = envOf(service(name), name);
      expect(env['DATABASE_URL'], `${name} DATABASE_URL`).to.be.a('string').and.match(/^mysql:\/\//);
      expect(env['REDIS_URL'], `${name} REDIS_URL`).to.be.a('string').and.match(/^redis:\/\//);
      expect(env['MILVUS_ADDRESS'], `${name} MILVUS_ADDRESS`).to.be.a('string').and.not.equal('');
    });
  }

  it('publishes the API on port 8080', () => {
    expect(publishedPorts(service('api'))).to.include('8080');
  });

  it('starts the API only after mysql, redis and milvus are healthy', () => {
    const deps = dependsOnConditions(service('api'), 'api');
    for (const dep of ['mysql', 'redis', 'milvus']) {
      expect(deps[dep], `api depends_on ${dep}`).to.equal('service_healthy');
    }
  });
});

describe('Dockerfile', () => {
  it('exists, exposes 8080 and starts the API by default', () => {
    expect(existsSync(dockerfilePath)).to.equal(true);
    const lines = readFileSync(dockerfilePath, 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));

    const exposed = lines
      .filter((line) => /^EXPOSE\s/i.test(line))
      .flatMap((line) => line.split(/\s+/).slice(1))
      .map((port) => port.replace(/\/tcp$/i, ''));
    expect(exposed).to.include('8080');

    const cmds = lines.filter((line) => /^CMD\s/i.test(line));
    expect(cmds, 'CMD instructions').to.not.be.empty;
    // The last CMD wins (it belongs to the final stage).
    // the compiled API entry point, run by node itself (it receives the container's signals)
    expect(cmds[cmds.length - 1]).to.include('dist/scripts/start-api.js');
  });
});
