/**
 * ISO 3166-1 alpha-2 as the emulator reads "partner_country is a valid ISO 3166-1 alpha-2 code"
 * (VAT rule 6): the 249 officially assigned codes, by first letter. User-assigned codes (XK for
 * Kosovo, XI for Northern Ireland's VAT prefix) are not assigned and are refused.
 */
const BY_LETTER: Record<string, string> = {
  A: 'D E F G I L M O Q R S T U W X Z',
  B: 'A B D E F G H I J L M N O Q R S T V W Y Z',
  C: 'A C D F G H I K L M N O R U V W X Y Z',
  D: 'E J K M O Z',
  E: 'C E G H R S T',
  F: 'I J K M O R',
  G: 'A B D E F G H I L M N P Q R S T U W Y',
  H: 'K M N R T U',
  I: 'D E L M N O Q R S T',
  J: 'E M O P',
  K: 'E G H I M N P R W Y Z',
  L: 'A B C I K R S T U V Y',
  M: 'A C D E F G H K L M N O P Q R S T U V W X Y Z',
  N: 'A C E F G I L O P R U Z',
  O: 'M',
  P: 'A E F G H K L M N R S T W Y',
  Q: 'A',
  R: 'E O S U W',
  S: 'A B C D E G H I J K L M N O R S T V X Y Z',
  T: 'C D F G H J K L M N O R T V W Z',
  U: 'A G M S Y Z',
  V: 'A C E G I N U',
  W: 'F S',
  Y: 'E T',
  Z: 'A M W',
};

const COUNTRIES: ReadonlySet<string> = new Set(
  Object.entries(BY_LETTER).flatMap(([first, seconds]) => seconds.split(' ').map((second) => `${first}${second}`)),
);

export const isCountry = (code: string): boolean => COUNTRIES.has(code);
export const COUNTRY_COUNT = COUNTRIES.size;

/** The 27 member states of the European Union (Greece as GR; its VAT prefix is EL). */
export const EU_STATES: ReadonlySet<string> = new Set([
  'AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE',
  'IT', 'LV', 'LT', 'LU', 'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE',
]);

/**
 * Countries whose addresses have no postal code (a geocoder answers `zip: null` there). A short
 * list of well-known cases, enough for the emulator's address variety.
 */
export const WITHOUT_POSTCODES: ReadonlySet<string> = new Set(['AE', 'AG', 'BS', 'BZ', 'HK', 'JM', 'MO', 'QA', 'TV', 'ZW']);
