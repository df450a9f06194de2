{{/*
Labels every object carries: deploy/default's, plus commonLabels.
*/}}
{{- define "gatehouse.labels" -}}
app.kubernetes.io/name: gatehouse
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The labels of the pods and what selects them.
*/}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: gatehouse
app.kubernetes.io/component: webhook
{{- end }}

{{/*
The labels of the audit's pods and what selects them: never the webhooks'.
*/}}
{{- define "gatehouse.auditSelectorLabels" -}}
app.kubernetes.io/name: gatehouse
app.kubernetes.io/component: audit
{{- end }}

{{/*
The image reference: a digest pins it, else the tag (appVersion when empty).
*/}}
{{- define "gatehouse.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/*
The server configuration: .Values.config with the modes and exemptions
added where they are set.
*/}}
{{- define "gatehouse.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "apiVersion" "gatehouse.dev/v1alpha1" -}}
{{- $_ := set $cfg "kind" "ServerConfig" -}}
{{- with .Values.defaultMode }}{{ $_ := set $cfg "defaultMode" . }}{{ end -}}
{{- with .Values.webhooks }}{{ $_ := set $cfg "webhooks" . }}{{ end -}}
{{- with .Values.exemptions }}{{ $_ := set $cfg "exemptions" . }}{{ end -}}
{{- with .Values.audit.reports.apis -}}
{{- $audit := dict -}}
{{- if hasKey $cfg "audit" }}{{ $audit = index $cfg "audit" }}{{ end -}}
{{- $_ := set $audit "reports" (dict "apis" .) -}}
{{- $_ := set $cfg "audit" $audit -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end }}
