import { escapeHtml, type RenderedMail } from '#platform';

/**
 * An integration's name as data inside a message: control and invisible format characters (bidirectional overrides,
 * zero-width spaces) removed, whitespace collapsed, in quotes. It never opens a subject or a paragraph, so a name
 * written as a message ("Your account is locked, call …") reads as what it is, a label somebody typed.
 */
export function quotedName(name: string): string {
  const clean = name
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return JSON.stringify(clean);
}

function render(subject: string, paragraphs: readonly string[], link?: string): RenderedMail {
  const text = paragraphs.join('\n\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">
${paragraphs
  .map((p) => {
    const escaped = escapeHtml(p).replace(/\n/g, '<br>');
    // The link is ours (APP_URL and a token); it is the only anchor in the message.
    return link && p.includes(link)
      ? escaped.replace(escapeHtml(link), `<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`)
      : escaped;
  })
  .map((p) => `<p>${p}</p>`)
  .join('\n')}
</body></html>`;
  return { subject, text, html };
}

/** The one message a pending recipient gets before confirming: fixed text, the link, and the name as data last. */
export function confirmationMail(input: { email: string; name: string; link: string }): RenderedMail {
  return render(
    'Confirm notifications from the governance service',
    [
      `A member of an organization on the governance service added ${input.email} to the recipients of one of its ` +
        'notification channels. Nothing will be sent to this address unless you confirm.',
      `To receive these notifications, confirm within 7 days (the link works once):\n${input.link}`,
      'If you did not expect this message, ignore it: you will hear nothing more.',
      `Channel, as named by the organization: ${quotedName(input.name)}`,
    ],
    input.link,
  );
}

/** The test send of an e-mail integration, to each confirmed recipient. */
export function testMail(input: { id: string; name: string }): RenderedMail {
  return render('Test notification from the governance service', [
    'This is a test notification from the governance service: this address receives the notifications of one ' +
      'of an organization’s channels. Nothing needs to be done.',
    `Channel, as named by the organization: ${quotedName(input.name)} (id ${input.id})`,
  ]);
}

/** A notification (an alert) whose text the caller wrote: its text, escaped in the HTML part. */
export function notificationMail(input: { subject: string; text: string }): RenderedMail {
  return render(input.subject, [input.text]);
}
