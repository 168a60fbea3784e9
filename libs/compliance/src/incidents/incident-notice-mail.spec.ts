import { describe, expect, it } from 'vitest';
import {
  INCIDENT_NOTICE_TEMPLATES,
  incidentNoticeMail,
  incidentNoticeSubject,
} from './incident-notice-mail.js';

describe('incident notice mail', () => {
  const incident = {
    id: '65f0c0ffee0000000000abcd',
    title: 'Chatbot leaked <b>"data"</b> & more',
    category: 'widespread_infringement' as const,
    awareAt: new Date('2026-03-01T10:00:00.000Z'),
    deadlineAt: new Date('2026-03-03T10:00:00.000Z'),
  };

  it('has the subject of each kind', () => {
    expect(incidentNoticeSubject('due_soon', 'Outage')).toBe(
      'Incident "Outage" must be reported within 24 hours',
    );
    expect(incidentNoticeSubject('overdue', 'Outage')).toBe('Incident "Outage" is overdue for reporting');
    expect(incidentNoticeMail('due_soon', incident, 'http://app.test').subject).toBe(
      `Incident "${incident.title}" must be reported within 24 hours`,
    );
    expect(incidentNoticeMail('overdue', incident, 'http://app.test').subject).toBe(
      `Incident "${incident.title}" is overdue for reporting`,
    );
    expect(INCIDENT_NOTICE_TEMPLATES).toEqual({ due_soon: 'incident-due-soon', overdue: 'incident-overdue' });
  });

  it('names the incident, its category, times in ISO 8601 UTC, article 73 and the link, in both parts', () => {
    const mail = incidentNoticeMail('due_soon', incident, 'http://app.test/');
    const link = 'http://app.test/incidents/65f0c0ffee0000000000abcd';
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain('widespread_infringement');
      expect(part).toContain('2026-03-01T10:00:00.000Z');
      expect(part).toContain('2026-03-03T10:00:00.000Z');
      expect(part).toContain('Article 73');
      expect(part).toContain(link);
    }
    expect(mail.text).toContain(incident.title);
    expect(mail.text).toContain('less than 24 hours');
    expect(incidentNoticeMail('overdue', incident, 'http://app.test').text).toContain('deadline has passed');
  });

  it('escapes every value in the HTML part', () => {
    const mail = incidentNoticeMail('overdue', incident, 'http://app.test');
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).not.toContain('"data"');
    expect(mail.html).toContain('Chatbot leaked &lt;b&gt;&quot;data&quot;&lt;/b&gt; &amp; more');
    const hostile = incidentNoticeMail('due_soon', { ...incident, id: 'x"><script>' }, 'http://app.test');
    expect(hostile.html).not.toContain('<script>');
    expect(hostile.html).not.toContain('x">');
  });
});
