/**
 * Connections: how the component authenticates. Each has an optional base URL so a step can use a
 * path as its url. The secrets they hold are handed to the client for fingerprinting (the
 * scope keeps only a hash) and for redaction (no log line, result or error shows them).
 */
import { connection, oauth2Connection, OAuth2Type, type Connection } from "@prismatic-io/spectral";

const baseUrl = {
  label: "Base URL",
  type: "string" as const,
  required: false,
  comments: "Prefixed to a step's url when the url is a path, e.g. https://api.example.com/v1.",
  example: "https://api.example.com/v1",
};

export const noAuth = connection({
  key: "noAuth",
  display: { label: "No Authentication", description: "Public APIs: no credential is sent." },
  inputs: { baseUrl },
});

export const apiKey = connection({
  key: "apiKey",
  display: { label: "API Key", description: "An API key sent in a named header or query parameter." },
  inputs: {
    apiKey: { label: "API Key", type: "password", required: true, comments: "The key. It is never logged or returned." },
    placement: {
      label: "Send In",
      type: "string",
      required: true,
      default: "header",
      model: [
        { label: "Header", value: "header" },
        { label: "Query parameter", value: "query" },
      ],
      comments: "Where the key goes.",
    },
    name: { label: "Header or Parameter Name", type: "string", required: true, default: "X-API-Key", comments: "The name the API expects the key under, e.g. X-API-Key (a header) or api_key (a query parameter).", example: "X-API-Key" },
    baseUrl,
  },
});

export const bearerToken = connection({
  key: "bearerToken",
  display: { label: "Bearer Token", description: "A static token sent as Authorization: Bearer <token>." },
  inputs: { token: { label: "Token", type: "password", required: true, comments: "Never logged or returned." }, baseUrl },
});

export const basicAuth = connection({
  key: "basicAuth",
  display: { label: "Basic Auth", description: "A username and password sent as Authorization: Basic." },
  inputs: {
    username: { label: "Username", type: "string", required: true, comments: "The user name; with the password it names the rate-limit scope (only a hash is kept).", example: "integration-user" },
    password: { label: "Password", type: "password", required: true, comments: "Never logged or returned." },
    baseUrl,
  },
});

export const oauth2AuthorizationCode = oauth2Connection({
  key: "oauth2AuthorizationCode",
  display: { label: "OAuth 2.0 Authorization Code", description: "OAuth 2.0 with a user's consent; the access token is sent as a bearer token." },
  oauth2Type: OAuth2Type.AuthorizationCode,
  inputs: {
    authorizeUrl: { label: "Authorize URL", type: "string", required: true, shown: true, comments: "The provider's OAuth 2.0 authorization endpoint.", example: "https://app.example.com/oauth2/authorize" },
    tokenUrl: { label: "Token URL", type: "string", required: true, shown: true, comments: "The provider's OAuth 2.0 token endpoint.", example: "https://app.example.com/oauth2/token" },
    scopes: { label: "Scopes", type: "string", required: false, shown: true, comments: "Space-separated OAuth scopes (permissions) to request.", example: "read write" },
    clientId: { label: "Client ID", type: "string", required: true, shown: true, comments: "The app's client id. It names the rate-limit scope across token refreshes (only a hash is kept).", example: "my-app-client-id" },
    clientSecret: { label: "Client Secret", type: "password", required: true, shown: true, comments: "The app's client secret. Never logged or returned." },
    baseUrl,
  },
});

export const oauth2ClientCredentials = oauth2Connection({
  key: "oauth2ClientCredentials",
  display: { label: "OAuth 2.0 Client Credentials", description: "OAuth 2.0 machine-to-machine; the access token is sent as a bearer token." },
  oauth2Type: OAuth2Type.ClientCredentials,
  inputs: {
    tokenUrl: { label: "Token URL", type: "string", required: true, shown: true, comments: "The provider's OAuth 2.0 token endpoint.", example: "https://app.example.com/oauth2/token" },
    scopes: { label: "Scopes", type: "string", required: false, shown: true, comments: "Space-separated OAuth scopes (permissions) to request.", example: "read write" },
    clientId: { label: "Client ID", type: "string", required: true, shown: true, comments: "The app's client id. It names the rate-limit scope across token refreshes (only a hash is kept).", example: "my-app-client-id" },
    clientSecret: { label: "Client Secret", type: "password", required: true, shown: true, comments: "The app's client secret. Never logged or returned." },
    baseUrl,
  },
});

/**
 * A shared store, not an API's credential: picked in a step's Shared Store input. Prismatic's own
 * Redis connector reaches Redis the same way (node-redis over TCP, TLS with rediss://) and closes
 * its connection at the end of each action (https://prismatic.io/connectors/redis/).
 */
export const redisConnection = connection({
  key: "redis",
  display: { label: "Redis (Shared Store)", description: "A Redis that the steps of every execution, flow and instance share: waits and rate-limit slots are written there the moment they are known." },
  inputs: {
    url: {
      label: "URL",
      type: "string",
      required: true,
      comments: "redis://host:port, or rediss://host:port for TLS (most managed Redis services). Put the password in Password, not in the URL.",
      example: "rediss://redis.example.com:6380",
      placeholder: "rediss://redis.example.com:6380",
    },
    username: { label: "Username", type: "string", required: false, comments: "The ACL user; blank for the default user.", example: "throttle-aware-http" },
    password: { label: "Password", type: "password", required: false, comments: "Never logged or returned." },
    keyPrefix: {
      label: "Key Prefix",
      type: "string",
      required: false,
      default: "throttle-aware-http:",
      comments: "Every key this component writes starts with it. Steps share waits only with steps that use the same Redis and the same prefix; keys expire by themselves once nothing in them matters.",
      example: "throttle-aware-http:",
    },
  },
});

/** The connections an API request can authenticate with (the Connection input). */
export const apiConnections = [noAuth, apiKey, bearerToken, basicAuth, oauth2AuthorizationCode, oauth2ClientCredentials];
export const connections = [...apiConnections, redisConnection];

/** What a connection contributes to a request. */
export interface ConnectionAuth {
  baseUrl?: string;
  headers: Record<string, string>;
  params: Record<string, string>;
  /** Material fingerprinted into the rate-limit scope (a keyed hash, never stored). */
  credential: string[];
  /** Everything to redact. */
  secrets: string[];
}

const text = (value: unknown): string => (typeof value === "string" ? value : value === undefined || value === null ? "" : String(value));

export function authFromConnection(conn: Connection | undefined | null): ConnectionAuth {
  const auth: ConnectionAuth = { headers: {}, params: {}, credential: [], secrets: [] };
  if (!conn) return auth;
  const fields = conn.fields ?? {};
  const base = text(fields.baseUrl).trim();
  if (base) auth.baseUrl = base;
  switch (conn.key) {
    case "noAuth":
      break;
    case "apiKey": {
      const key = text(fields.apiKey);
      const name = text(fields.name).trim() || "X-API-Key";
      if (text(fields.placement) === "query") auth.params[name] = key;
      else auth.headers[name] = key;
      auth.credential.push(key);
      auth.secrets.push(key);
      break;
    }
    case "bearerToken": {
      const token = text(fields.token);
      auth.headers.Authorization = `Bearer ${token}`;
      auth.credential.push(token);
      auth.secrets.push(token);
      break;
    }
    case "basicAuth": {
      const username = text(fields.username);
      const password = text(fields.password);
      const encoded = Buffer.from(`${username}:${password}`).toString("base64");
      auth.headers.Authorization = `Basic ${encoded}`;
      auth.credential.push(`${username}:${password}`);
      auth.secrets.push(password, encoded);
      break;
    }
    case "oauth2AuthorizationCode":
    case "oauth2ClientCredentials": {
      const accessToken = text(conn.token?.access_token);
      if (accessToken) auth.headers.Authorization = `Bearer ${accessToken}`;
      // The client id names the app (and so the rate-limit scope) across token refreshes.
      auth.credential.push(text(fields.clientId) || accessToken);
      auth.secrets.push(accessToken, text(conn.token?.refresh_token), text(fields.clientSecret));
      break;
    }
    case "redis":
      throw new Error("Invalid Connection: the Redis connection is a shared store, not an API's credential. Pick it in Shared Store, and pick the API's connection (or none) in Connection.");
    default:
      throw new Error(`Unknown connection type "${conn.key}". Use one of: ${apiConnections.map((c) => c.key).join(", ")}.`);
  }
  auth.secrets = auth.secrets.filter((s) => s.length > 0);
  return auth;
}

/** The Redis store's settings from a Shared Store connection, and the secrets to keep out of every message. */
export interface SharedStoreSettings {
  url: string;
  username?: string;
  password?: string;
  keyPrefix?: string;
  secrets: string[];
}

/**
 * Reads a Shared Store connection. Bad settings get one line naming the field and what to enter;
 * the URL's own password (redis://:secret@host) counts as a secret too.
 */
export function sharedStoreFromConnection(conn: Connection | undefined | null): SharedStoreSettings | null {
  if (!conn) return null;
  if (conn.key !== "redis") throw new Error(`Invalid Shared Store: it takes the Redis connection, not "${conn.key}". Pick a Redis (Shared Store) connection, or leave Shared Store empty to use cross-flow state alone.`);
  const fields = conn.fields ?? {};
  const url = text(fields.url).trim();
  const password = text(fields.password);
  const parsed = URL.canParse(url) ? new URL(url) : null;
  const secrets = [password, parsed ? decodeURIComponent(parsed.password) : ""].filter((s) => s.length > 0);
  if (!parsed || (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") || parsed.hostname === "") {
    throw new Error("Invalid Shared Store URL: enter redis://host:port, or rediss://host:port for TLS (e.g. rediss://redis.example.com:6380).");
  }
  const keyPrefix = text(fields.keyPrefix).trim();
  return { url, username: text(fields.username).trim() || undefined, password: password || undefined, keyPrefix: keyPrefix || undefined, secrets };
}
