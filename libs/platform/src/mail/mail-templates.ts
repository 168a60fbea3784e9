/** A rendered message: subject, plain text and HTML. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/**
 * A message with one call to action: a greeting, a paragraph, a link button and a closing line. All values are
 * escaped in the HTML part; the link is also written out in full in both parts.
 */
export function actionMail(input: {
  subject: string;
  greeting: string;
  intro: string;
  actionLabel: string;
  actionUrl: string;
  outro: string;
}): RenderedMail {
  const text = [
    input.greeting,
    '',
    input.intro,
    '',
    `${input.actionLabel}: ${input.actionUrl}`,
    '',
    input.outro,
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">
<p>${escapeHtml(input.greeting)}</p>
<p>${escapeHtml(input.intro)}</p>
<p><a href="${escapeHtml(input.actionUrl)}" style="display:inline-block;padding:10px 16px;background:#1f4fd1;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(input.actionLabel)}</a></p>
<p style="font-size:13px;color:#555">Or open this link: ${escapeHtml(input.actionUrl)}</p>
<p>${escapeHtml(input.outro)}</p>
</body></html>`;
  return { subject: input.subject, text, html };
}
