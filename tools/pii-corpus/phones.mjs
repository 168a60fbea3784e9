// Phone numbers of the PII corpus: a valid national number of a country (drawn from realistic prefixes, then checked
// against libphonenumber's metadata, which defines what a valid number is), printed as people write it.
import { PhoneNumber } from 'libphonenumber-js/max';
import { digitString, pick } from './values.mjs';

/** Numbering plans of the corpus: calling code, national trunk prefix, national number shapes (prefix, digits after). */
const PHONE_PLANS = {
  DE: {
    cc: '49',
    trunk: '0',
    shapes: [
      ['151', 8],
      ['160', 7],
      ['170', 7],
      ['176', 8],
      ['30', 8],
      ['40', 7],
      ['89', 8],
      ['221', 7],
      ['69', 8],
    ],
  },
  AT: {
    cc: '43',
    trunk: '0',
    shapes: [
      ['664', 7],
      ['676', 7],
      ['699', 8],
      ['1', 7],
    ],
  },
  CH: {
    cc: '41',
    trunk: '0',
    shapes: [
      ['79', 7],
      ['78', 7],
      ['76', 7],
      ['44', 7],
      ['31', 7],
    ],
  },
  FR: {
    cc: '33',
    trunk: '0',
    shapes: [
      ['6', 8],
      ['7', 8],
      ['1', 8],
      ['4', 8],
      ['5', 8],
    ],
  },
  BE: {
    cc: '32',
    trunk: '0',
    shapes: [
      ['47', 7],
      ['48', 7],
      ['49', 7],
      ['2', 7],
      ['3', 7],
    ],
  },
  ES: {
    cc: '34',
    trunk: '',
    shapes: [
      ['6', 8],
      ['7', 8],
      ['91', 7],
      ['93', 7],
    ],
  },
  IT: {
    cc: '39',
    trunk: '',
    shapes: [
      ['33', 8],
      ['34', 8],
      ['32', 8],
      ['02', 8],
      ['06', 8],
    ],
  },
  NL: {
    cc: '31',
    trunk: '0',
    shapes: [
      ['6', 8],
      ['20', 7],
      ['10', 7],
      ['30', 7],
    ],
  },
  PL: {
    cc: '48',
    trunk: '',
    shapes: [
      ['50', 7],
      ['51', 7],
      ['60', 7],
      ['69', 7],
      ['22', 7],
      ['12', 7],
    ],
  },
  GB: {
    cc: '44',
    trunk: '0',
    shapes: [
      ['7', 9],
      ['20', 8],
      ['121', 7],
      ['161', 7],
    ],
  },
  IE: {
    cc: '353',
    trunk: '0',
    shapes: [
      ['83', 7],
      ['85', 7],
      ['87', 7],
      ['1', 7],
    ],
  },
  US: {
    cc: '1',
    trunk: '',
    shapes: [
      ['212', 7],
      ['415', 7],
      ['312', 7],
      ['617', 7],
      ['206', 7],
      ['305', 7],
      ['512', 7],
    ],
  },
};

/** A valid national significant number of `country` (checked against libphonenumber's metadata). */
function nationalNumber(r, country) {
  const plan = PHONE_PLANS[country];
  for (;;) {
    const [prefix, rest] = pick(r, plan.shapes);
    let nsn = prefix + digitString(r, rest);
    if (country === 'US') nsn = prefix + String(r.number.int({ min: 2, max: 9 })) + digitString(r, rest - 1);
    if (new PhoneNumber(`+${plan.cc}${nsn}`).isValid()) return nsn;
  }
}

/** A phone number of `country` printed as people write it: international or national, grouped or not. */
export function phone(r, country) {
  const plan = PHONE_PLANS[country];
  const nsn = nationalNumber(r, country);
  const number = new PhoneNumber(`+${plan.cc}${nsn}`);
  const intl = number.formatInternational(); // +49 151 23456789
  const national = number.formatNational(); // 0151 23456789
  const style = r.number.float();
  if (style < 0.3) return intl;
  if (style < 0.36) return `+${plan.cc}${nsn}`;
  if (style < 0.42) return plan.trunk ? intl.replace(`+${plan.cc} `, `+${plan.cc} (0)`) : intl;
  if (style < 0.47) return `00${plan.cc} ${intl.slice(plan.cc.length + 2)}`;
  if (style < 0.75) return national;
  if (style < 0.83) {
    // Other separators where people use them: dots in France, Belgium and the US, slashes in Germany and Austria.
    const sep = pick(
      r,
      ['FR', 'BE', 'US'].includes(country) ? ['.', '-'] : ['DE', 'AT'].includes(country) ? ['/', '-'] : ['-'],
    );
    if (country === 'US') return national.replace(/[()]/g, '').replace(' ', sep).replace('-', sep);
    return national.includes('(') ? national : national.replace(/ /g, sep);
  }
  return national.replace(/[^0-9]/g, '');
}
