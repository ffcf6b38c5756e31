package registry

import (
	"context"
	"math"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// VolumeAttachment's strategy, as upstream's
// pkg/registry/storage/volumeattachment: decoding defaults an inline
// volume spec's nested sources; a create starts from an empty status, a
// write keeps the stored status, a status write keeps the stored spec and
// the metadata a status strategy resets (statusReset with
// resetStatusMetadataAll), and every write is checked as a whole with the
// spec immutable.
//
// 1.37 enforces two beta declarative rules of the kind, which replace the
// handwritten ones they cover: on create, the attacher's checks (required,
// a caseless DNS subdomain, at most 63 characters) come last, with the
// declarative messages; on an update that changes spec, the immutability
// error shows no value. Handwritten errors are deduplicated by message
// before the declarative ones are appended.
// An inline volume spec (spec.source.inlineVolumeSpec) is checked as a
// PersistentVolume spec in the context of inline volumes (CSI only).

var (
	attacherFld = specPath.Child("attacher")
	vaSourceFld = specPath.Child("source")
	vaStatusFld = field.NewPath("status")
)

// VolumeAttachment limits (upstream's pkg/apis/storage/validation).
const (
	maxAttachmentMetadataSize = 256 << 10
	maxVolumeErrorMessageSize = 1024
)

func volumeAttachmentStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) {
			if s := obj.(*storagev1.VolumeAttachment).Spec.Source.InlineVolumeSpec; s != nil {
				defaultInlineVolumeSpec(s)
			}
		},
		ResetStatusMetadata: resetStatusMetadataAll,
		Validate: func(obj runtime.Object) field.ErrorList {
			va := obj.(*storagev1.VolumeAttachment)
			errs := uniqueMessages(validateVolumeAttachment(va, false))
			return append(errs, declarativeAttacherErrors(va.Spec.Attacher)...)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			va, was := obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment)
			errs := ValidateObjectMeta(va, false, apivalidation.NameIsDNSSubdomain)
			errs = uniqueMessages(append(errs, validateVolumeAttachment(va, true)...))
			if !apiequality.Semantic.DeepEqual(va.Spec, was.Spec) {
				errs = append(errs, validate.Immutable(context.Background(), operation.Operation{Type: operation.Update}, specPath, &va.Spec, &was.Spec)...)
			}
			return errs
		},
	}
}

// validateVolumeAttachment is the handwritten check of a whole attachment;
// withAttacher says whether the attacher's checks are among them (on
// update, where the declarative rules covering them do not run).
func validateVolumeAttachment(va *storagev1.VolumeAttachment, withAttacher bool) field.ErrorList {
	var errs field.ErrorList
	if withAttacher {
		errs = append(errs, validateCSIDriverName(va.Spec.Attacher, attacherFld)...)
	}
	errs = append(errs, validateAttachmentSource(&va.Spec.Source)...)
	if s := va.Spec.Source.InlineVolumeSpec; s != nil && va.Spec.Source.PersistentVolumeName == nil {
		errs = append(errs, validatePVSpec(s, va.Name, true, vaSourceFld.Child("inlineVolumeSpec"), pvValidationOptions{})...)
	}
	errs = append(errs, dnsSubdomainName(va.Spec.NodeName, specPath.Child("nodeName"))...)
	errs = append(errs, validateAttachmentStatus(&va.Status)...)
	if pv := va.Spec.Source.PersistentVolumeName; pv != nil {
		errs = append(errs, dnsSubdomainName(*pv, vaSourceFld.Child("persistentVolumeName"))...)
	}
	return errs
}

// declarativeAttacherErrors are the attacher errors 1.37's beta
// declarative rules report on create.
func declarativeAttacherErrors(attacher string) field.ErrorList {
	ctx, op := context.Background(), operation.Operation{Type: operation.Create}
	if errs := validate.RequiredValue(ctx, op, attacherFld, &attacher, nil); len(errs) > 0 {
		return errs
	}
	errs := validate.LongNameCaseless(ctx, op, attacherFld, &attacher, nil)
	return append(errs, validate.MaxLength(ctx, op, attacherFld, &attacher, nil, 63)...)
}

// validateAttachmentSource: exactly one of a persistent volume name (not
// empty) and an inline volume spec.
func validateAttachmentSource(s *storagev1.VolumeAttachmentSource) field.ErrorList {
	const exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case s.InlineVolumeSpec == nil && s.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(vaSourceFld, exactlyOne)}
	case s.InlineVolumeSpec != nil && s.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(vaSourceFld, exactlyOne)}
	case s.PersistentVolumeName != nil && *s.PersistentVolumeName == "":
		return field.ErrorList{field.Required(vaSourceFld.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
	}
	return nil
}

// validateAttachmentStatus: attachment metadata within 256 KiB, error
// messages within 1,024 bytes, error codes not negative.
func validateAttachmentStatus(s *storagev1.VolumeAttachmentStatus) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for k, v := range s.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachmentMetadataSize {
		errs = append(errs, field.TooLong(vaStatusFld.Child("attachmentMetadata"), "", maxAttachmentMetadataSize))
	}
	errs = append(errs, validateVolumeError(s.AttachError, vaStatusFld.Child("attachError"))...)
	return append(errs, validateVolumeError(s.DetachError, vaStatusFld.Child("detachError"))...)
}

func validateVolumeError(e *storagev1.VolumeError, p *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var errs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		errs = append(errs, field.TooLong(p.Child("message"), "", maxVolumeErrorMessageSize))
	}
	if c := e.ErrorCode; c != nil && *c < 0 {
		errs = append(errs, field.Invalid(p.Child("errorCode"), *c, validation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return errs
}

// defaultInlineVolumeSpec applies the v1 defaults of an inline volume
// spec's nested objects (not the PersistentVolume's own: reclaim policy
// and volume mode stay unset).
func defaultInlineVolumeSpec(s *corev1.PersistentVolumeSpec) {
	roundResourceList(s.Capacity)
	if s.HostPath != nil && s.HostPath.Type == nil {
		s.HostPath.Type = ptr.To(corev1.HostPathUnset)
	}
	if r := s.RBD; r != nil {
		setString(&r.RBDPool, "rbd")
		setString(&r.RadosUser, "admin")
		setString(&r.Keyring, "/etc/ceph/keyring")
	}
	if i := s.ISCSI; i != nil {
		setString(&i.ISCSIInterface, "default")
	}
	if a := s.AzureDisk; a != nil {
		setPtr(&a.CachingMode, corev1.AzureDataDiskCachingReadWrite)
		setPtr(&a.FSType, "ext4")
		setPtr(&a.ReadOnly, false)
		setPtr(&a.Kind, corev1.AzureSharedBlobDisk)
	}
	if sc := s.ScaleIO; sc != nil {
		setString(&sc.StorageMode, "ThinProvisioned")
		setString(&sc.FSType, "xfs")
	}
}

func setString(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

func setPtr[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}
