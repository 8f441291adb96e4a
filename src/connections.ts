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

export const connections = [noAuth, apiKey, bearerToken, basicAuth, oauth2AuthorizationCode, oauth2ClientCredentials];

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
    default:
      throw new Error(`Unknown connection type "${conn.key}". Use one of: ${connections.map((c) => c.key).join(", ")}.`);
  }
  auth.secrets = auth.secrets.filter((s) => s.length > 0);
  return auth;
}
