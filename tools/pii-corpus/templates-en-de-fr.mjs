// Sentence templates of the PII corpus (en, de, fr). `{email}`, `{phone}`, `{iban}`, `{card}`, `{ip}` and the national
// id (`{id}`) are labelled values; `{!kind}` a hard negative (never labelled); `{first}`, `{name}`, `{company}`, `{city}`,
// `{product}`, `{date}`, `{amount}`, `{n}`, `{ticket}` filler. `ctx` templates carry a label or context word for the
// value, `bare` ones none.

export const en = {
  greet: ['Hi {first},', 'Hello,', 'Dear Sir or Madam,', 'Hi team,', 'Good morning {first},'],
  close: ['Thanks,\n{name}', 'Best regards,\n{name}\n{company}', 'Cheers, {first}', 'Kind regards\n{name}'],
  subjects: [
    'Refund not received',
    'Cannot log in',
    'Wrong item delivered',
    'Update my details',
    'Payment failed',
    'Account locked',
  ],
  roles: ['Customer', 'Agent'],
  filler: [
    'I ordered the {product} on {date} and it still has not arrived.',
    'The tracking page has not been updated for {n} days.',
    'Could you please check what went wrong with my last payment?',
    'I was charged {amount} twice for the same order.',
    'The app crashes every time I open the settings page.',
    'Thanks for getting back to me so quickly.',
    'I have attached a screenshot of the error message.',
    'We moved to {city} last month, so the delivery address has changed.',
    'Our team at {company} uses the premium plan.',
    'I would like to cancel my subscription at the end of the month.',
    'The customer confirmed the issue is resolved after the reset.',
    'Please escalate this to the billing team.',
    'I tried resetting my password but the link had expired.',
    'The invoice total of {amount} does not match the quote.',
    'Summary: the user reports a failed delivery and asks for a refund.',
    'Next step: verify the identity of the customer before changing the account.',
  ],
  pii: {
    email: {
      ctx: [
        'You can reach me by email at {email}.',
        'My email address is {email}',
        'Please send the invoice to {email}.',
        'Contact: {email}',
        'I changed my e-mail to {email} last week.',
      ],
      bare: [
        'Reply to {email} please.',
        '{name} <{email}> wrote:',
        'Forwarding this to {email} as discussed.',
      ],
    },
    phone: {
      ctx: [
        'Call me on {phone} any time after 5pm.',
        'My phone number is {phone}.',
        'Mobile: {phone}',
        'You can ring me at {phone}.',
        'Tel. {phone}',
        'The customer asked for a call back on {phone}.',
      ],
      bare: [
        'I am available at {phone} tomorrow.',
        'Reach me at {phone} if the courier is late.',
        '{name}, {phone}, {city}',
      ],
    },
    iban: {
      ctx: [
        'Please refund the amount to my account, IBAN {iban}.',
        'IBAN: {iban}',
        'My bank details are {iban} ({company}).',
        'Please transfer it to account {iban}.',
      ],
      bare: ['The refund should go to {iban}, not to the card.', 'Use {iban} for the payment.'],
    },
    card: {
      ctx: [
        'I paid with my credit card {card}.',
        'Card number: {card}',
        'The charge on my Visa {card} was declined.',
        'Can you remove the card ending in … actually the full number is {card}.',
      ],
      bare: ['I entered {card} at checkout and it failed.', 'Please charge {card} for the renewal.'],
    },
    ip: {
      ctx: [
        'The login came from IP {ip}.',
        'Server {ip} is not responding.',
        'Blocked IP address: {ip}',
        'The failed sign-in attempts originated from host {ip}.',
      ],
      bare: ['Requests from {ip} keep timing out.', 'I can ping {ip} but the dashboard will not load.'],
    },
  },
  ids: {
    US: {
      ctx: [
        'My SSN is {id}.',
        'Social Security number: {id}',
        'For the tax form: SSN {id}, born {date}.',
        'The applicant provided social security no. {id}.',
      ],
      bare: ['{name}, {id}, {city}', 'Number on file: {id}'],
    },
    GB: {
      ctx: [
        'My National Insurance number is {id}.',
        'NI number: {id}',
        'NINO {id} (for payroll).',
        'Please update the national insurance no. to {id}.',
      ],
      bare: ['{name}, {id}, {city}', 'Reference on file: {id}'],
    },
  },
  neg: [
    'Order number {!order} has not been shipped yet.',
    'My order {!order} was cancelled without notice.',
    'The IBAN you gave me, {!ibanbad}, was rejected by the bank.',
    'Timestamp of the error: {!ts}',
    'Log entry {!ts}: connection reset.',
    'We are running version {!ver} of the app.',
    'After the update to {!ver} the sync stopped working.',
    'Tracking number: {!track}',
    'Your parcel {!track} is out for delivery.',
    'Customer number {!r9}, invoice {!r11}.',
    'Invoice no. {!r11} is overdue.',
    'Ticket {!r9} was merged into this one.',
    'The barcode on the box reads {!ean}.',
    'Please quote reference {!r9} in any reply.',
  ],
};

export const de = {
  greet: [
    'Hallo {first},',
    'Guten Tag,',
    'Sehr geehrte Damen und Herren,',
    'Hallo zusammen,',
    'Moin {first},',
  ],
  close: [
    'Viele Grüße\n{name}',
    'Mit freundlichen Grüßen\n{name}\n{company}',
    'Danke und Gruß, {first}',
    'Beste Grüße\n{name}',
  ],
  subjects: [
    'Erstattung fehlt',
    'Login nicht möglich',
    'Falscher Artikel geliefert',
    'Daten ändern',
    'Zahlung fehlgeschlagen',
    'Konto gesperrt',
  ],
  roles: ['Kunde', 'Agent'],
  filler: [
    'Ich habe am {date} den Artikel „{product}“ bestellt und er ist immer noch nicht da.',
    'Die Sendungsverfolgung wurde seit {n} Tagen nicht aktualisiert.',
    'Könnten Sie bitte prüfen, was bei meiner letzten Zahlung schiefgelaufen ist?',
    'Mir wurden {amount} doppelt abgebucht.',
    'Die App stürzt jedes Mal ab, wenn ich die Einstellungen öffne.',
    'Vielen Dank für die schnelle Rückmeldung.',
    'Im Anhang finden Sie einen Screenshot der Fehlermeldung.',
    'Wir sind letzten Monat nach {city} umgezogen, die Lieferadresse hat sich geändert.',
    'Unser Team bei {company} nutzt den Premium-Tarif.',
    'Ich möchte mein Abo zum Monatsende kündigen.',
    'Der Kunde bestätigt, dass das Problem nach dem Zurücksetzen behoben ist.',
    'Bitte an die Buchhaltung weiterleiten.',
    'Der Link zum Zurücksetzen des Passworts war leider abgelaufen.',
    'Der Rechnungsbetrag von {amount} stimmt nicht mit dem Angebot überein.',
    'Zusammenfassung: Der Nutzer meldet eine fehlgeschlagene Lieferung und bittet um Erstattung.',
    'Nächster Schritt: Identität des Kunden prüfen, bevor das Konto geändert wird.',
  ],
  pii: {
    email: {
      ctx: [
        'Sie erreichen mich per E-Mail unter {email}.',
        'Meine E-Mail-Adresse lautet {email}',
        'Bitte schicken Sie die Rechnung an {email}.',
        'Kontakt: {email}',
        'Meine Mail ist jetzt {email}.',
      ],
      bare: ['Antwort bitte an {email}.', '{name} <{email}> schrieb:', 'Ich leite das an {email} weiter.'],
    },
    phone: {
      ctx: [
        'Rufen Sie mich gerne unter {phone} an.',
        'Meine Telefonnummer ist {phone}.',
        'Handy: {phone}',
        'Tel.: {phone}',
        'Ich bin telefonisch unter {phone} erreichbar.',
        'Der Kunde bittet um Rückruf unter {phone}.',
      ],
      bare: [
        'Morgen bin ich unter {phone} zu erreichen.',
        'Falls der Fahrer zu spät ist: {phone}',
        '{name}, {phone}, {city}',
      ],
    },
    iban: {
      ctx: [
        'Bitte erstatten Sie den Betrag auf mein Konto, IBAN {iban}.',
        'IBAN: {iban}',
        'Meine Bankverbindung: {iban} ({company}).',
        'Bitte überweisen Sie auf das Konto {iban}.',
      ],
      bare: ['Die Erstattung bitte auf {iban}, nicht auf die Karte.', 'Nutzen Sie {iban} für die Zahlung.'],
    },
    card: {
      ctx: [
        'Ich habe mit meiner Kreditkarte {card} bezahlt.',
        'Kartennummer: {card}',
        'Die Abbuchung von meiner Visa {card} wurde abgelehnt.',
        'Meine Karte {card} wurde doppelt belastet.',
      ],
      bare: [
        'Ich habe {card} an der Kasse eingegeben und es ging nicht.',
        'Bitte buchen Sie die Verlängerung von {card} ab.',
      ],
    },
    ip: {
      ctx: [
        'Der Login kam von der IP {ip}.',
        'Server {ip} antwortet nicht.',
        'Gesperrte IP-Adresse: {ip}',
        'Die fehlgeschlagenen Anmeldungen kamen vom Host {ip}.',
      ],
      bare: [
        'Anfragen von {ip} laufen in ein Timeout.',
        'Ich kann {ip} anpingen, aber das Dashboard lädt nicht.',
      ],
    },
  },
  ids: {
    DE: {
      ctx: [
        'Meine Steuer-ID lautet {id}.',
        'Steuerliche Identifikationsnummer: {id}',
        'Für die Lohnabrechnung: IdNr. {id}',
        'Die Steueridentifikationsnummer des Mitarbeiters ist {id}.',
      ],
      bare: ['{name}, {id}, {city}', 'Hinterlegte Nummer: {id}'],
    },
  },
  neg: [
    'Die Bestellnummer {!order} wurde noch nicht versandt.',
    'Meine Bestellung {!order} wurde ohne Nachricht storniert.',
    'Die IBAN, die Sie mir gegeben haben, {!ibanbad}, wurde von der Bank abgelehnt.',
    'Zeitstempel des Fehlers: {!ts}',
    'Logeintrag {!ts}: Verbindung zurückgesetzt.',
    'Wir nutzen Version {!ver} der App.',
    'Nach dem Update auf {!ver} funktioniert die Synchronisierung nicht mehr.',
    'Sendungsnummer: {!track}',
    'Ihr Paket {!track} ist in Zustellung.',
    'Kundennummer {!r9}, Rechnung {!r11}.',
    'Die Rechnung Nr. {!r11} ist überfällig.',
    'Das Ticket {!r9} wurde mit diesem zusammengeführt.',
    'Auf dem Karton steht der Barcode {!ean}.',
    'Bitte geben Sie bei Rückfragen die Vorgangsnummer {!r9} an.',
  ],
};

export const fr = {
  greet: ['Bonjour {first},', 'Bonjour,', 'Madame, Monsieur,', 'Salut {first},', 'Bonsoir,'],
  close: [
    'Cordialement,\n{name}',
    'Bien à vous,\n{name}\n{company}',
    'Merci, {first}',
    'Bonne journée\n{name}',
  ],
  subjects: [
    'Remboursement non reçu',
    'Connexion impossible',
    'Mauvais article livré',
    'Modifier mes données',
    'Paiement refusé',
    'Compte bloqué',
  ],
  roles: ['Client', 'Agent'],
  filler: [
    'J’ai commandé « {product} » le {date} et je ne l’ai toujours pas reçu.',
    'Le suivi n’a pas été mis à jour depuis {n} jours.',
    'Pourriez-vous vérifier ce qui s’est passé avec mon dernier paiement ?',
    'On m’a prélevé {amount} deux fois.',
    'L’application plante à chaque fois que j’ouvre les paramètres.',
    'Merci pour votre réponse rapide.',
    'Vous trouverez ci-joint une capture d’écran du message d’erreur.',
    'Nous avons déménagé à {city} le mois dernier, l’adresse de livraison a changé.',
    'Notre équipe chez {company} utilise l’offre Premium.',
    'Je souhaite résilier mon abonnement à la fin du mois.',
    'Le client confirme que le problème est résolu après la réinitialisation.',
    'Merci de transmettre au service facturation.',
    'Le lien de réinitialisation du mot de passe avait expiré.',
    'Le montant de {amount} ne correspond pas au devis.',
    'Résumé : l’utilisateur signale une livraison échouée et demande un remboursement.',
    'Étape suivante : vérifier l’identité du client avant toute modification.',
  ],
  pii: {
    email: {
      ctx: [
        'Vous pouvez me joindre par e-mail à {email}.',
        'Mon adresse e-mail est {email}',
        'Merci d’envoyer la facture à {email}.',
        'Contact : {email}',
        'Mon courriel a changé : {email}.',
      ],
      bare: [
        'Répondez à {email} svp.',
        '{name} <{email}> a écrit :',
        'Je transfère à {email} comme convenu.',
      ],
    },
    phone: {
      ctx: [
        'Appelez-moi au {phone} après 17 h.',
        'Mon numéro de téléphone est le {phone}.',
        'Portable : {phone}',
        'Tél. : {phone}',
        'Le client demande à être rappelé au {phone}.',
      ],
      bare: [
        'Je suis disponible demain au {phone}.',
        'Si le livreur est en retard : {phone}',
        '{name}, {phone}, {city}',
      ],
    },
    iban: {
      ctx: [
        'Merci de rembourser sur mon compte, IBAN {iban}.',
        'IBAN : {iban}',
        'Mes coordonnées bancaires : {iban} ({company}).',
        'Merci de faire le virement sur le compte {iban}.',
      ],
      bare: [
        'Le remboursement doit aller sur {iban}, pas sur la carte.',
        'Utilisez {iban} pour le paiement.',
      ],
    },
    card: {
      ctx: [
        'J’ai payé avec ma carte bancaire {card}.',
        'Numéro de carte : {card}',
        'Le paiement avec ma carte {card} a été refusé.',
        'Ma carte Visa {card} a été débitée deux fois.',
      ],
      bare: [
        'J’ai saisi {card} au paiement et ça n’a pas marché.',
        'Merci de prélever {card} pour le renouvellement.',
      ],
    },
    ip: {
      ctx: [
        'La connexion venait de l’IP {ip}.',
        'Le serveur {ip} ne répond plus.',
        'Adresse IP bloquée : {ip}',
        'Les tentatives de connexion venaient de l’hôte {ip}.',
      ],
      bare: [
        'Les requêtes depuis {ip} expirent.',
        'Je peux pinguer {ip} mais le tableau de bord ne charge pas.',
      ],
    },
  },
  ids: {
    FR: {
      ctx: [
        'Mon numéro de sécurité sociale est le {id}.',
        'N° de sécurité sociale : {id}',
        'NIR : {id}',
        'Pour la mutuelle, voici mon numéro de sécu : {id}.',
      ],
      bare: ['{name}, {id}, {city}', 'Numéro enregistré : {id}'],
    },
  },
  neg: [
    'La commande {!order} n’a pas encore été expédiée.',
    'Ma commande n° {!order} a été annulée sans prévenir.',
    'L’IBAN que vous m’avez donné, {!ibanbad}, a été refusé par la banque.',
    'Horodatage de l’erreur : {!ts}',
    'Entrée du journal {!ts} : connexion réinitialisée.',
    'Nous utilisons la version {!ver} de l’application.',
    'Depuis la mise à jour {!ver}, la synchronisation ne marche plus.',
    'Numéro de suivi : {!track}',
    'Votre colis {!track} est en cours de livraison.',
    'Numéro client {!r9}, facture {!r11}.',
    'La facture n° {!r11} est en retard.',
    'Le ticket {!r9} a été fusionné avec celui-ci.',
    'Le code-barres sur le carton indique {!ean}.',
    'Merci de rappeler la référence {!r9} dans votre réponse.',
  ],
};
