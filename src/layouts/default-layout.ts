/**
 * The layout a new environment starts with (Novu's onboarding makes one of the same name and
 * identifier, the default, in each environment that derives from none: Development). Tidings' own
 * HTML: a centred card on a grey page, the organization's logo above it and its colour along its
 * top edge, the preheader hidden before it. It reads only what every email has (`{{{body}}}`,
 * `{{{preheader}}}`, `{{subject}}`, `{{branding.*}}`), so it has no variables of its own.
 */
export const DEFAULT_LAYOUT = {
  name: "Default Layout",
  identifier: "novu-default-layout",
  description: "The default layout, made with the environment",
  content: `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="x-apple-disable-message-reformatting">
<title>{{subject}}</title>
</head>
<body style="margin:0;padding:0;background-color:#f4f5f7;">
{{#if preheader}}<div style="display:none;max-height:0;overflow:hidden;">{{{preheader}}}</div>
{{/if}}<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f4f5f7;">
<tr><td align="center" style="padding:32px 16px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:600px;">
{{#if branding.logo}}<tr><td align="center" style="padding:0 0 24px;"><img src="{{branding.logo}}" alt="" width="160" style="display:block;max-width:160px;height:auto;border:0;"></td></tr>
{{/if}}<tr><td style="background-color:{{#if branding.contentBackground}}{{branding.contentBackground}}{{else}}#ffffff{{/if}};border-top:4px solid {{branding.color}};border-radius:4px;padding:32px;font-family:{{#if branding.fontFamily}}{{branding.fontFamily}}{{else}}Helvetica,Arial,sans-serif{{/if}};font-size:16px;line-height:1.5;color:{{#if branding.fontColor}}{{branding.fontColor}}{{else}}#3c4858{{/if}};"{{#if branding.direction}} dir="{{branding.direction}}"{{/if}}>
{{{body}}}
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>`,
} as const;
