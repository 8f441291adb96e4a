/**
 * Form Data and File Data as one multipart/form-data body, built as spectral's Raw Request builds
 * it (spectral dist/clients/http/index.js toFormData: fields as given; files through
 * util.types.toBufferDataPayload, named by File Data File Names or else by their key). It is
 * encoded to bytes once, through the platform's own FormData and Response (Node 18+), so every
 * retry sends the same body: a form-data stream would be spent after the first attempt.
 */
import { util } from "@prismatic-io/spectral";
import { ThrottleInputError } from "../client";
import type { KeyValueEntry } from "../inputs";

export interface MultipartBody {
  body: Buffer;
  /** multipart/form-data with its boundary. */
  contentType: string;
  /** For Debug Request: the part names and file names, never the contents. */
  summary: string;
}

function fieldValue(key: string, value: unknown): string | Blob {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === null || value === undefined) return "";
  if (Buffer.isBuffer(value) || value instanceof Uint8Array || util.types.isBufferDataPayload(value)) return fileBlob("Form Data", key, value);
  return JSON.stringify(value);
}

function fileBlob(label: string, key: string, value: unknown): Blob {
  let payload: { data: Buffer; contentType: string };
  try {
    payload = util.types.toBufferDataPayload(value);
  } catch {
    throw new ThrottleInputError(`Invalid ${label}: the value of "${key.slice(0, 40)}" is neither text nor a file. Enter text, or reference a file from a previous step.`);
  }
  return new Blob([new Uint8Array(payload.data)], { type: payload.contentType });
}

/** The multipart body for Form Data and File Data, or undefined when both are empty. */
export async function toMultipartBody(formData: readonly KeyValueEntry[], fileData: readonly KeyValueEntry[], fileNames: Readonly<Record<string, string>>): Promise<MultipartBody | undefined> {
  if (formData.length === 0 && fileData.length === 0) return undefined;
  const form = new FormData();
  for (const { key, value } of formData) form.append(key, fieldValue(key, value));
  const files: string[] = [];
  for (const { key, value } of fileData) {
    const fileName = fileNames[key] || key;
    form.append(key, fileBlob("File Data", key, value), fileName);
    files.push(`${key} (${fileName})`);
  }
  const encoded = new Response(form);
  const body = Buffer.from(await encoded.arrayBuffer());
  const contentType = encoded.headers.get("content-type") ?? "multipart/form-data";
  const summary = `multipart/form-data, ${body.length} bytes; fields: ${formData.map((f) => f.key).join(", ") || "none"}; files: ${files.join(", ") || "none"}`;
  return { body, contentType, summary };
}
