/** The tax engine's token and verify shapes (tax-engine.ts has the decisions where the document says "not shown"). */
import { z } from 'zod';
import { IsoDateTime } from './common.js';

// ---------------------------------------------------------------------------------------------
// Tokens

/** Variant A form body (`POST {auth_url}/oauth/token`, form-encoded). */
export const TokenRequestA = z.strictObject({
  grant_type: z.literal('client_credentials'),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
});
export type TokenRequestA = z.infer<typeof TokenRequestA>;

/** Variant B body (`POST /v1/auth/token`). */
export const TokenRequestB = TokenRequestA.omit({ grant_type: true });
export type TokenRequestB = z.infer<typeof TokenRequestB>;

/** Variant A token response. */
export const TokenResponseA = z.object({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i, 'expected token_type "Bearer"'),
  /** Lifetime in seconds. */
  expires_in: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/).transform(Number)]),
});
export type TokenResponseA = z.infer<typeof TokenResponseA>;

/** Variant B token response: variant A plus the expiry timestamp. */
export const TokenResponseB = TokenResponseA.extend({ expire_at: IsoDateTime.optional() });
export type TokenResponseB = z.infer<typeof TokenResponseB>;

/** Decoded JWT claims returned by `POST /v1/auth/verify`; other claims pass through. */
export const VerifyClaimsContract = z.looseObject({
  /** Expiry, seconds since the epoch. */
  exp: z.number().optional(),
  iat: z.number().optional(),
  nbf: z.number().optional(),
  sub: z.string().optional(),
  iss: z.string().optional(),
  aud: z.union([z.string(), z.array(z.string())]).optional(),
});
export type VerifyClaimsContract = z.infer<typeof VerifyClaimsContract>;
