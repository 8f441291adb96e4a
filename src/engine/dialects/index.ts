/** The dialect registry: one file per provider; the host picks one unless the caller names it. */
import type { Dialect } from "../dialect";
import { normaliseHost } from "../context";
import { hostMatches } from "../dialect";
import { generic } from "./generic";
import { github } from "./github";
import { shopify } from "./shopify";
import { stripe } from "./stripe";
import { salesforce } from "./salesforce";
import { slack } from "./slack";
import { hubspot } from "./hubspot";
import { msgraph } from "./msgraph";
import { dataverse } from "./dataverse";
import { openai } from "./openai";
import { anthropic } from "./anthropic";
import { discord } from "./discord";
import { zendesk } from "./zendesk";
import { twilio } from "./twilio";
import { jira } from "./jira";
import { google } from "./google";
import { xero } from "./xero";
import { quickbooks } from "./quickbooks";
import { airtable } from "./airtable";
import { notion } from "./notion";
import { asana } from "./asana";
import { intercom } from "./intercom";
import { mailchimp } from "./mailchimp";
import { zoom } from "./zoom";
import { jobber } from "./jobber";
import { sentry } from "./sentry";
import { marketo } from "./marketo";
import { meta } from "./meta";
import { monday } from "./monday";
import { amazonSellingPartner } from "./amazon-sp";
import { linkedin } from "./linkedin";
import { bigcommerce } from "./bigcommerce";
import { trello } from "./trello";
import { okta } from "./okta";
import { square } from "./square";
import { freshdesk } from "./freshdesk";
import { pipedrive } from "./pipedrive";
import { dropbox } from "./dropbox";
import { smartsheet } from "./smartsheet";
import { zohoCrm } from "./zoho-crm";
import { netsuite } from "./netsuite";
import { gorgias } from "./gorgias";
import { etsy } from "./etsy";
import { contentful } from "./contentful";
import { klaviyo } from "./klaviyo";
import { twitter } from "./twitter";
import { gitlab } from "./gitlab";
import { reddit } from "./reddit";
import { clickup } from "./clickup";
import { greenhouse } from "./greenhouse";
import { docusign } from "./docusign";
import { bamboohr } from "./bamboohr";
import { aws } from "./aws";
import { azure, azureStorage } from "./azure";
import { box } from "./box";
import { servicenow } from "./servicenow";
import { vimeo } from "./vimeo";
import { cloudflare } from "./cloudflare";
import { chargebee } from "./chargebee";
import { sendgrid } from "./sendgrid";
import { helpscout } from "./helpscout";
import { webflow } from "./webflow";
import { typeform } from "./typeform";
import { constantContact } from "./constantcontact";
import { paypal } from "./paypal";
import { brevo } from "./brevo";
import { activecampaign } from "./activecampaign";
import { gusto } from "./gusto";
import { postmark } from "./postmark";
import { ebay } from "./ebay";
import { mailgun } from "./mailgun";

export const dialects: readonly Dialect[] = [
  github,
  shopify,
  stripe,
  salesforce,
  slack,
  hubspot,
  msgraph,
  dataverse,
  openai,
  anthropic,
  discord,
  zendesk,
  twilio,
  jira,
  google,
  xero,
  quickbooks,
  airtable,
  notion,
  asana,
  intercom,
  mailchimp,
  zoom,
  jobber,
  sentry,
  marketo,
  meta,
  monday,
  amazonSellingPartner,
  linkedin,
  bigcommerce,
  trello,
  okta,
  square,
  freshdesk,
  pipedrive,
  dropbox,
  smartsheet,
  zohoCrm,
  netsuite,
  gorgias,
  etsy,
  contentful,
  klaviyo,
  twitter,
  gitlab,
  reddit,
  clickup,
  greenhouse,
  docusign,
  bamboohr,
  aws,
  azure,
  azureStorage,
  box,
  servicenow,
  vimeo,
  cloudflare,
  chargebee,
  sendgrid,
  helpscout,
  webflow,
  typeform,
  constantContact,
  paypal,
  brevo,
  activecampaign,
  gusto,
  postmark,
  ebay,
  mailgun,
  generic,
];

const byId = new Map(dialects.map((d) => [d.id, d]));

export function dialectById(id: string): Dialect | undefined {
  return byId.get(id.trim().toLowerCase());
}

/** The dialect for a host (any letter case, with or without a trailing dot), or the generic one. */
export function dialectForHost(host: string): Dialect {
  const known = byHost.get(host);
  if (known) return known;
  const name = normaliseHost(host);
  const dialect = dialects.find((d) => d.hosts.some((pattern) => hostMatches(name, pattern))) ?? generic;
  // Every request and answer asks this; a client talks to few hosts. Bounded so it cannot grow.
  if (byHost.size >= HOST_CACHE_SIZE) byHost.clear();
  byHost.set(host, dialect);
  return dialect;
}

const HOST_CACHE_SIZE = 512;
const byHost = new Map<string, Dialect>();

export { generic };
